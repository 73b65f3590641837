# shellcheck shell=sh
# What fails a stress run besides an operation's own check: a kernel splat,
# an error or mismatch seen by fio, a host tag still held once the devices
# are idle, a leak. Each check sets ERR and returns 1 when it fails.

# Splats: those scripts/qemu.sh fails a run for, and hung or stalled tasks.
SPLAT_RE='WARNING:|\bBUG\b|Oops|lockdep|KASAN|UBSAN|kmemleak: [0-9]+ new suspected|Kernel panic|general protection|blocked for more than|soft lockup|self-detected stall|rcu_.*detected stall'
# The debug kernel's boot banners name lockdep.
BENIGN_RE='RCU lockdep checking is enabled|Lock dependency validator|lockdep: fixing up alternatives'

# kmsg_start: follow the kernel log from now on into $S/kmsg (records of
# /dev/kmsg: "prio,seq,usec,flags;text"), read back on fd 7 by check_kmsg.
# Records from before the run (earlier selftests) are told apart by their
# time stamp.
kmsg_start() {
	read -r _up _ </proc/uptime
	KMSG_T0=${_up%.*}${_up#*.}0000
	KMSG_PART=""
	: >"$S/kmsg"
	# cat ends when it falls behind the ring buffer (EPIPE); it starts
	# again from the oldest record (a splat read twice failed the run the
	# first time).
	(while [ ! -e "$S/kmsg.stop" ]; do cat /dev/kmsg 2>/dev/null; done) >>"$S/kmsg" &
	echo $! >"$S/pid.kmsg"
	exec 7<"$S/kmsg"
}

kmsg_stop() {
	: >"$S/kmsg.stop"
	read -r _pid <"$S/pid.kmsg"
	kill "$_pid" 2>/dev/null
	# The loop's cat would wait for the next record.
	kill_children "$_pid"
}

# kill_children PID: end the direct children of PID.
kill_children() {
	_parent=$1
	for _p in /proc/[0-9]*; do
		read -r _stat 2>/dev/null <"$_p/stat" || continue
		# "pid (comm) state ppid ...": comm may hold blanks, so split after ')'.
		# shellcheck disable=SC2086 # the split is intended
		set -- ${_stat##*) }
		[ "$2" = "$_parent" ] && kill "${_p#/proc/}" 2>/dev/null
	done
	return 0
}

# check_kmsg: no splat was logged since the last call. The shell reads the
# new records itself; grep runs only for one that looks like a splat.
check_kmsg() {
	_splat=""
	while :; do
		_l=""
		if ! IFS= read -r _l <&7; then
			# A record cat has not finished writing: keep it for later.
			KMSG_PART=$KMSG_PART$_l
			break
		fi
		_l=$KMSG_PART$_l
		KMSG_PART=""
		case "$_l" in
		*WARNING:* | *BUG* | *Oops* | *lockdep* | *KASAN* | *UBSAN* | *kmemleak* | *panic* | \
			*"general protection"* | *"blocked for more"* | *lockup* | *stall*) ;;
		*) continue ;;
		esac
		# "prio,seq,usec,flags;text": the time stamp is the third field.
		_h=${_l%%;*}
		_ts=${_h#*,}
		_ts=${_ts#*,}
		_ts=${_ts%%,*}
		[ "$_ts" -ge "$KMSG_T0" ] 2>/dev/null || continue
		_txt=${_l#*;}
		printf '%s\n' "$_txt" | grep -E "$SPLAT_RE" | grep -qvE "$BENIGN_RE" || continue
		[ -n "$_splat" ] || _splat=$_txt
	done
	[ -z "$_splat" ] && return 0
	ERR="kernel log: $_splat"
	return 1
}

# check_io: no fio loop reported an error or a verify mismatch.
check_io() {
	for _f in "$S"/fail.*; do
		[ -e "$_f" ] || continue
		ERR="fio ${_f##*/fail.}: $(tr '\n' ' ' <"$_f" | cut -c1-600)"
		return 1
	done
	return 0
}

# tags_idle: with no I/O running, every host tag is back and nobody waits:
# host/in_use and host/waiting_queues are 0, and so is each disk's
# rnull/tags_in_flight. Completions may still be on their way when fio
# returns (irqmode=2's timers, the bandwidth limit): up to 5 s.
tags_idle() {
	_try=0
	while :; do
		_held=""
		read -r _v <"$H/in_use"
		[ "$_v" = 0 ] || _held="$_held host/in_use=$_v"
		read -r _v <"$H/waiting_queues"
		[ "$_v" = 0 ] || _held="$_held host/waiting_queues=$_v"
		for _t in /sys/block/rnullb*/rnull/tags_in_flight; do
			[ -e "$_t" ] || continue
			read -r _v <"$_t"
			[ "$_v" = 0 ] || _held="$_held ${_t#/sys/block/}=$_v"
		done
		[ -z "$_held" ] && return 0
		_try=$((_try + 1))
		if [ $_try -ge 50 ]; then
			ERR="tags still held with no I/O for 5 s:$_held"
			return 1
		fi
		usleep 100000
	done
}

# stuck_tasks: the tasks in uninterruptible sleep, with where they wait
# (D_PIDS: their pids).
stuck_tasks() {
	D_PIDS=""
	for _p in /proc/[0-9]*; do
		read -r _stat 2>/dev/null <"$_p/stat" || continue
		# shellcheck disable=SC2086 # the split is intended
		set -- ${_stat##*) }
		[ "$1" = D ] || continue
		D_PIDS="$D_PIDS ${_p#/proc/}"
		echo "# task ${_p#/proc/} ($(cat "$_p/comm")) in D, waiting in $(cat "$_p/wchan" 2>/dev/null)"
		sed 's/^/#   /' "$_p/stack" 2>/dev/null | head -n 20
	done
}

# no_hung_tasks: once the devices are gone, no task stays in
# uninterruptible sleep (the same one, 2 s apart): a task hung in the
# kernel fails the run even where no operation waits for it.
no_hung_tasks() {
	stuck_tasks >/dev/null
	_d0=" $D_PIDS "
	sleep 2
	# Not in a command substitution: D_PIDS is set in this shell.
	stuck_tasks >"$S/stuck"
	for _p in $D_PIDS; do
		case "$_d0" in
		*" $_p "*)
			cat "$S/stuck"
			ERR="task $_p ($(cat "/proc/$_p/comm" 2>/dev/null)) still in D state 2 s later (hung)"
			return 1
			;;
		esac
	done
}

# kmemleak: the debug kernel's leak detector, when it is there.
KMEMLEAK=/sys/kernel/debug/kmemleak

# kmemleak_mark: remember the objects already reported (leaks of earlier
# selftests stay for selftest 099; only new ones count here).
kmemleak_mark() {
	[ -w $KMEMLEAK ] || return 0
	echo scan >$KMEMLEAK
	# "#" first: grep -f with no pattern at all would match nothing.
	{
		echo "#"
		grep '^unreferenced object' $KMEMLEAK | awk '{ print $3 }'
	} >"$S/kmemleak.before"
}

# check_kmemleak: no object unreferenced since kmemleak_mark (two scans:
# kmemleak reports an object only once two of them found it unreferenced).
check_kmemleak() {
	echo scan >$KMEMLEAK
	sleep 6
	echo scan >$KMEMLEAK
	cat $KMEMLEAK >"$S/kmemleak.after"
	_new=$(grep '^unreferenced object' "$S/kmemleak.after" | awk '{ print $3 }' |
		grep -vxF -f "$S/kmemleak.before")
	[ -z "$_new" ] && return 0
	echo "# kmemleak: $(echo "$_new" | wc -l) new unreferenced object(s):"
	for _a in $(echo "$_new" | head -n 3); do
		sed -n "/unreferenced object $_a/,/^unreferenced object/p" "$S/kmemleak.after" |
			sed '$d' | head -n 25 | sed 's/^/#   /'
	done
	ERR="kmemleak: $(echo "$_new" | wc -l) new unreferenced object(s)"
	return 1
}
