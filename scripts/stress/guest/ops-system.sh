# shellcheck shell=sh
# Operations on the system around the devices: CPU hotplug, removal
# attempts, quiesces, a memory cgroup, page allocation faults. An
# operation the kernel cannot do is not drawn for (engine.sh skips it,
# with the reason req_NAME gave).
# op_NAME draws its arguments from the sequence, names itself with desc,
# does it and checks its own outcome: 0 passed, 1 failed (ERR says why).

# req_hotplug: CPUs that can go offline (cpuN/online).
req_hotplug() {
	HOTPLUG_CPUS=""
	for _c in /sys/devices/system/cpu/cpu[0-9]*; do
		[ -e "$_c/online" ] && HOTPLUG_CPUS="$HOTPLUG_CPUS ${_c##*/cpu}"
	done
	[ -n "$HOTPLUG_CPUS" ] && return 0
	WHY="no /sys/devices/system/cpu/cpuN/online (CONFIG_HOTPLUG_CPU off, or one CPU)"
	return 1
}

# A CPU off or on line, under I/O; one stays online.
op_hotplug() {
	# shellcheck disable=SC2086 # one word per CPU
	pick $HOTPLUG_CPUS
	_c=$R
	val "/sys/devices/system/cpu/cpu$_c/online"
	_to=$((1 - V))
	_on=0
	for _o in /sys/devices/system/cpu/cpu[0-9]*; do
		# A CPU without an online file cannot go offline.
		if [ ! -e "$_o/online" ] || [ "$(cat "$_o/online")" = 1 ]; then
			_on=$((_on + 1))
		fi
	done
	[ $_on -gt 1 ] || _to=1
	desc "cpu$_c/online=$_to"
	wr "/sys/devices/system/cpu/cpu$_c/online" $_to || {
		ERR="refused: $WHY"
		return 1
	}
	expect_val "/sys/devices/system/cpu/cpu$_c/online" $_to
}

# hotplug_all_online: end of run.
hotplug_all_online() {
	for _c in $HOTPLUG_CPUS; do
		wr "/sys/devices/system/cpu/cpu$_c/online" 1 || {
			ERR="cpu$_c/online=1 refused: $WHY"
			return 1
		}
	done
}

# sys_disks: SD = the rnull disks in /sys/block.
sys_disks() {
	SD=""
	for _b in /sys/block/rnullb*; do
		SD="$SD ${_b##*/}"
	done
}

# rmmod while disks are open and configfs directories exist: refused,
# nothing changed.
op_rmmod() {
	desc "rmmod rnull while busy: refused"
	sys_disks
	_before=$SD
	if rmmod rnull 2>/dev/null; then
		ERR="rmmod rnull succeeded with devices in use"
		return 1
	fi
	[ -d "$H" ] || {
		ERR="host budget directory gone after a refused rmmod"
		return 1
	}
	sys_disks
	[ "$SD" = "$_before" ] || {
		ERR="disks '$SD' after a refused rmmod, '$_before' before"
		return 1
	}
}

# rmdir of the subsystem directory: refused, the devices stay.
op_rmroot() {
	desc "rmdir $CFS: refused"
	if rmdir "$CFS" 2>/dev/null; then
		ERR="rmdir $CFS succeeded"
		return 1
	fi
	if [ ! -d "$LIVE" ] || [ ! -d "$CYC" ]; then
		ERR="a device directory went with a refused rmdir of $CFS"
		return 1
	fi
}

# With the I/O stopped between rounds, every tag is back.
op_quiesce() {
	desc "quiesce: every host tag back with no I/O, the sentinels intact"
	loops_pause || return 1
	tags_idle && sentinels_check
	_rc=$?
	loops_resume
	return $_rc
}

MEMCG=/sys/fs/cgroup/stress

# req_memcg: a memory cgroup for op_memcg.
req_memcg() {
	grep -qw memory /proc/cgroups 2>/dev/null || {
		WHY="no memory cgroup controller (CONFIG_MEMCG off: /proc/cgroups lacks memory)"
		return 1
	}
	mkdir -p /sys/fs/cgroup
	mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	if ! mkdir -p $MEMCG || ! echo 16M >$MEMCG/memory.max 2>/dev/null; then
		WHY="cannot make a cgroup v2 with memory.max"
		return 1
	fi
	dd if=/dev/urandom of="$S/memcg.src" bs=64k count=128 2>/dev/null
}

# A buffered writer in a 16 MiB memory cgroup puts 8 MiB on cyc (reclaim
# and writeback under the limit) while live's submit queues change; no
# error, the data reads back.
op_memcg() {
	if [ "$CYC_ON" = 0 ]; then
		desc "memcg writer: cyc is off, nothing to do"
		return 0
	fi
	desc "memcg: 8 MiB buffered to $CYC_DEV in 16 MiB while live's queues change"
	# shellcheck disable=SC2016 # $$ is the writer's own pid
	sh -c 'echo $$ >'"$MEMCG"'/cgroup.procs && exec dd if='"$S"'/memcg.src of=/dev/'"$CYC_DEV"' bs=64k seek=2048 conv=fsync' \
		2>"$S/memcg.err" &
	_w=$!
	val "$LIVE/submit_queues"
	_sq=$V
	for _v in 1 "$CPUS" 1 "$CPUS"; do
		wr "$LIVE/submit_queues" "$_v" || {
			ERR="live/submit_queues=$_v refused: $WHY"
			wait $_w
			return 1
		}
	done
	wr "$LIVE/submit_queues" "$_sq"
	wait $_w || {
		ERR="the memcg-limited writer failed: $(cat "$S/memcg.err")"
		return 1
	}
	if ! sector-io read "/dev/$CYC_DEV" "$BB_END" 16384 "$S/got" 2>"$S/err" ||
		! cmp -s "$S/got" "$S/memcg.src"; then
		ERR="the memcg-limited writer's data did not read back: $(cat "$S/err")"
		return 1
	fi
}

FAIL_PAGE=/sys/kernel/debug/fail_page_alloc

# req_failalloc: page allocation fault injection.
req_failalloc() {
	[ -d $FAIL_PAGE ] && return 0
	WHY="no $FAIL_PAGE (CONFIG_FAIL_PAGE_ALLOC off)"
	return 1
}

# For a second, one in five page allocations that cannot sleep fails
# (what memory-backed writes allocate under pressure) while fio verifies:
# no I/O error may follow.
op_failalloc() {
	desc "fail_page_alloc: 20% of non-sleeping page allocations for 1 s"
	echo Y >$FAIL_PAGE/ignore-gfp-wait
	echo N >$FAIL_PAGE/task-filter
	echo 0 >$FAIL_PAGE/verbose
	echo 1 >$FAIL_PAGE/interval
	echo 200 >$FAIL_PAGE/times
	echo 20 >$FAIL_PAGE/probability
	sleep 1
	echo 0 >$FAIL_PAGE/probability
	echo 0 >$FAIL_PAGE/times
}
