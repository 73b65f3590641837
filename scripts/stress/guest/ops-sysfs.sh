# shellcheck shell=sh
# Operations on sysfs tunables: the disks' rnull/ and mq/ files, the host
# budget's, the queues' scheduler and nr_requests, and values each must
# refuse.
# op_NAME draws its arguments from the sequence, names itself with desc,
# does it and checks its own outcome: 0 passed, 1 failed (ERR says why).

# A disk's rnull/completion_nsec.
op_completion() {
	pick_disk
	_d=$R
	pick 0 1000 10000 100000 1000000
	desc "$_d/rnull/completion_nsec=$R"
	wr "/sys/block/$_d/rnull/completion_nsec" "$R" || {
		ERR="refused: $WHY"
		return 1
	}
	expect_val "/sys/block/$_d/rnull/completion_nsec" "$R"
}

# A hardware queue's mq/<n>/time_slice_us.
op_slice() {
	pick_disk
	_d=$R
	nr_hctx "$_d"
	rnd "$N"
	_q=$R
	pick 0 0 50 500 5000 20000
	desc "$_d/mq/$_q/time_slice_us=$R"
	wr "/sys/block/$_d/mq/$_q/time_slice_us" "$R" || {
		ERR="refused: $WHY"
		return 1
	}
	expect_val "/sys/block/$_d/mq/$_q/time_slice_us" "$R"
}

# A bandwidth limit: host/mbps or a disk's rnull/mbps.
op_mbps() {
	disks
	# shellcheck disable=SC2086 # one word per disk
	pick host $DISKS
	_f=/sys/block/$R/rnull/mbps
	[ "$R" = host ] && _f=$H/mbps
	pick 0 0 20 100 1000
	desc "${_f#/sys/}=$R"
	wr "$_f" "$R" || {
		ERR="refused: $WHY"
		return 1
	}
	expect_val "$_f" "$R"
}

# host/policy: one of the names the file lists.
op_policy() {
	val "$H/policy"
	# shellcheck disable=SC2086 # one word per policy
	unbracket $V
	# shellcheck disable=SC2086 # one word per policy
	pick $W
	_p=$R
	desc "host/policy=$_p"
	wr "$H/policy" "$_p" || {
		ERR="refused: $WHY"
		return 1
	}
	val "$H/policy"
	case " $V " in
	*" [$_p] "*) return 0 ;;
	esac
	ERR="host/policy reads '$V' after writing $_p"
	return 1
}

# host/depth, also below the requests in flight.
op_depth() {
	pick 1 2 3 4 8 16 24 32 32 48 64 128 1024
	desc "host/depth=$R"
	wr "$H/depth" "$R" || {
		ERR="refused: $WHY"
		return 1
	}
	expect_val "$H/depth" "$R"
}

# The other host budget tunables.
op_host() {
	pick window_shared_pct borrow_expiry_us idle_ms
	_a=$R
	case $_a in
	window_shared_pct) pick 0 5 10 50 100 ;;
	borrow_expiry_us) pick 0 100 5000 20000 ;;
	idle_ms) pick 1 10 100 1000 ;;
	esac
	desc "host/$_a=$R"
	wr "$H/$_a" "$R" || {
		ERR="refused: $WHY"
		return 1
	}
	expect_val "$H/$_a" "$R"
}

# queue/scheduler: one of those the file lists. A queue without
# schedulers (no_sched=1: the file reads "none", unbracketed) refuses any
# with EOPNOTSUPP.
op_sched() {
	pick_disk
	_d=$R
	_f=/sys/block/$_d/queue/scheduler
	val "$_f"
	_before=$V
	# shellcheck disable=SC2086 # one word per scheduler
	unbracket $V
	# shellcheck disable=SC2086 # one word per scheduler
	pick $W
	_s=$R
	case "$_before" in
	*"["*) ;;
	*)
		desc "$_d/queue/scheduler=$_s (no_sched: EOPNOTSUPP)"
		if wr "$_f" "$_s"; then
			ERR="taken by a queue without schedulers"
			return 1
		fi
		refused_with "not supported" && expect_val "$_f" "$_before"
		return
		;;
	esac
	desc "$_d/queue/scheduler=$_s"
	wr "$_f" "$_s" || {
		ERR="refused: $WHY"
		return 1
	}
	val "$_f"
	case " $V " in
	*" [$_s] "*) return 0 ;;
	esac
	ERR="queue/scheduler reads '$V' after writing $_s"
	return 1
}

# queue/nr_requests: taken (below 4 as 4, blk-mq's minimum) or, past what
# the tags or the scheduler take, refused with EINVAL and unchanged.
op_nrreq() {
	pick_disk
	_d=$R
	pick 1 4 8 16 32 64 128 256 2048 4096
	_v=$R
	_f=/sys/block/$_d/queue/nr_requests
	desc "$_d/queue/nr_requests=$_v"
	val "$_f"
	_before=$V
	if wr "$_f" "$_v"; then
		[ "$_v" -ge 4 ] || _v=4
		expect_val "$_f" "$_v"
		return
	fi
	refused_with "Invalid argument" && expect_val "$_f" "$_before"
}

# A value a file must refuse (EINVAL), which then reads as before.
op_refuse() {
	pick 1 2 3 4 5 6 7 8 9
	case $R in
	1) set -- "$H/depth" 0 ;;
	2) set -- "$H/depth" 1025 ;;
	3) set -- "$H/policy" bogus ;;
	4) set -- "$H/window_shared_pct" 101 ;;
	5) set -- "$H/idle_ms" 0 ;;
	6) set -- "$H/mbps" $((MAX_MIBPS + 1)) ;;
	7) set -- /sys/block/rnullb0/rnull/mbps $((MAX_MIBPS + 1)) ;;
	8) set -- /sys/block/rnullb1/rnull/completion_nsec 1000000001 ;;
	9) set -- /sys/block/rnullb2/mq/0/time_slice_us 100001 ;;
	esac
	desc "${1#/sys/}=$2: refused"
	val "$1"
	_before=$V
	if wr "$1" "$2"; then
		ERR="${1#/sys/} took $2"
		return 1
	fi
	refused_with "Invalid argument" && expect_val "$1" "$_before"
}
