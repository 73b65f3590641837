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
# The memcg writer's share of live: past the verify rounds' 4 MiB and the
# sentinel, to live's end; more than the cgroup may hold.
MEMCG_MAX=16M
MEMCG_OFFSET=40m
MEMCG_SIZE=24m

# req_memcg: a cgroup v2 with the memory controller, for op_memcg.
req_memcg() {
	grep -qw memory /proc/cgroups 2>/dev/null || {
		WHY="no memory cgroup controller (CONFIG_MEMCG off: /proc/cgroups lacks memory)"
		return 1
	}
	mkdir -p /sys/fs/cgroup
	[ -e /sys/fs/cgroup/cgroup.controllers ] || mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	if ! mkdir -p $MEMCG || ! echo $MEMCG_MAX >$MEMCG/memory.max 2>/dev/null; then
		WHY="cannot make a cgroup v2 with memory.max"
		return 1
	fi
}

# memcg_event NAME: V = the cgroup's memory.events counter NAME.
memcg_event() {
	V=$(awk -v k="$1" '$1 == k { print $2 }' $MEMCG/memory.events)
}

# fio in a memory cgroup smaller than what it writes: buffered writes to
# live, reclaimed and written back under the limit while live's submit
# queues change, then read back (from the device for what reclaim took)
# and verified. No error, no mismatch; the limit must have been hit (or
# the operation tested nothing) and fio not OOM-killed.
op_memcg() {
	desc "memcg: fio writes and verifies $MEMCG_SIZE of live (buffered) in memory.max=$MEMCG_MAX while live's submit_queues change"
	memcg_event max
	_max0=$V
	memcg_event oom_kill
	_oom0=$V
	# shellcheck disable=SC2016 # $$ is the writer's own pid
	sh -c 'echo $$ >'"$MEMCG"'/cgroup.procs && exec fio --allow_file_create=0 --name=memcg \
		--filename=/dev/rnullb2 --offset='"$MEMCG_OFFSET"' --size='"$MEMCG_SIZE"' --rw=write \
		--bs=64k --ioengine=psync --direct=0 --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--output-format=terse --terse-version=3' >"$S/memcg.out" 2>&1 &
	_w=$!
	val "$LIVE/submit_queues"
	_sq=$V
	_v=1
	while kill -0 $_w 2>/dev/null; do
		wr "$LIVE/submit_queues" $_v || {
			ERR="live/submit_queues=$_v refused: $WHY"
			wait $_w
			return 1
		}
		_v=$((_v % CPUS + 1))
		usleep 200000
	done
	wait $_w
	_rc=$?
	wr "$LIVE/submit_queues" "$_sq" || {
		ERR="live/submit_queues=$_sq refused: $WHY"
		return 1
	}
	_err=$(grep '^3;' "$S/memcg.out" | cut -d';' -f5)
	if [ $_rc != 0 ] || [ "$_err" != 0 ]; then
		ERR="fio in the memory cgroup: exit $_rc, error ${_err:-none}: $(grep -v '^3;' "$S/memcg.out" | tail -n 5 | tr '\n' ' ')"
		return 1
	fi
	memcg_event oom_kill
	[ "$V" = "$_oom0" ] || {
		ERR="fio in the memory cgroup was OOM-killed"
		return 1
	}
	memcg_event max
	[ "$V" -gt "$_max0" ] || {
		ERR="memory.max was never hit: no reclaim, the operation tested nothing"
		return 1
	}
}

FAIL_PAGE=/sys/kernel/debug/fail_page_alloc
# Fresh MiBs of rnullb0 for op_failalloc, one per operation: the verify
# rounds write its first 4 MiB and the sentinel sits at 32 MiB, so past 64
# MiB rnull allocates the pages of each write. Past gb=1 it starts again
# on pages that are there.
FRESH_FIRST=64
FRESH_END=1024
FRESH_NEXT=$FRESH_FIRST
# What fail_page_alloc may fail during one operation.
FAIL_BUDGET=1000000

# req_failalloc: page allocation fault injection.
req_failalloc() {
	[ -e $FAIL_PAGE/probability ] || {
		WHY="no $FAIL_PAGE (CONFIG_FAIL_PAGE_ALLOC or CONFIG_FAULT_INJECTION_DEBUG_FS off)"
		return 1
	}
	# Any task, only allocations that may not sleep (those rnull makes in
	# queue_rq), any order.
	echo N >$FAIL_PAGE/task-filter
	echo Y >$FAIL_PAGE/ignore-gfp-wait
	echo N >$FAIL_PAGE/ignore-gfp-highmem
	echo 0 >$FAIL_PAGE/min-order
	echo 0 >$FAIL_PAGE/verbose
	echo 1 >$FAIL_PAGE/interval
	echo 0 >$FAIL_PAGE/probability
	dd if=/dev/urandom of="$S/fresh" bs=64k count=16 2>/dev/null
}

# One in five page allocations that may not sleep fails, anywhere, while
# 1 MiB is written to fresh sectors of rnullb0 under the fio loops: rnull
# retries, no I/O error follows, the MiB reads back. Some allocation must
# have failed, and on fresh sectors some of rnullb0's (nomem_retries).
op_failalloc() {
	_mib=$FRESH_NEXT
	_fresh=1
	FRESH_NEXT=$((FRESH_NEXT + 1))
	if [ $FRESH_NEXT -ge $FRESH_END ]; then
		FRESH_NEXT=$FRESH_FIRST
		FRESH_WRAPPED=1
	fi
	[ -z "${FRESH_WRAPPED:-}" ] || _fresh=0
	desc "fail_page_alloc: 20% of non-sleeping page allocations fail while 1 MiB goes to rnullb0 at $_mib MiB (fresh=$_fresh)"
	val /sys/block/rnullb0/rnull/nomem_retries
	_r0=$V
	echo $FAIL_BUDGET >$FAIL_PAGE/times
	echo 20 >$FAIL_PAGE/probability
	sector-io write /dev/rnullb0 $((_mib << 11)) 2048 "$S/fresh" 2>"$S/err"
	_rc=$?
	echo 0 >$FAIL_PAGE/probability
	val $FAIL_PAGE/times
	_failed=$((FAIL_BUDGET - V))
	echo 0 >$FAIL_PAGE/times
	[ $_rc = 0 ] || {
		ERR="the write under fail_page_alloc failed ($_failed allocations failed): $(cat "$S/err")"
		return 1
	}
	if ! sector-io read /dev/rnullb0 $((_mib << 11)) 2048 "$S/got" 2>"$S/err" ||
		! cmp -s "$S/got" "$S/fresh"; then
		ERR="the MiB written under fail_page_alloc does not read back: $(cat "$S/err")"
		return 1
	fi
	[ $_failed -gt 0 ] || {
		ERR="no page allocation failed: the operation tested nothing"
		return 1
	}
	val /sys/block/rnullb0/rnull/nomem_retries
	[ $_fresh = 0 ] || [ "$V" -gt "$_r0" ] || {
		ERR="$_failed page allocations failed, none of rnullb0's for its fresh pages (nomem_retries stays $V)"
		return 1
	}
}
