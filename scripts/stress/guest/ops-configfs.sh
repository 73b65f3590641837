# shellcheck shell=sh
# Operations on the configfs devices: power, rmdir, settings, hardware
# queue counts, bad blocks, and reads of the data written once.
# op_NAME draws its arguments from the sequence, names itself with desc,
# does it and checks its own outcome: 0 passed, 1 failed (ERR says why).

# configfs power of cyc, under its load.
op_power() {
	if [ "$CYC_ON" = 1 ]; then
		desc "power cyc off"
		wr "$CYC/power" 0 || {
			ERR="power=0 refused: $WHY"
			return 1
		}
		CYC_ON=0
		[ ! -e "/sys/block/$CYC_DEV" ] || {
			ERR="$CYC_DEV still there after power=0"
			return 1
		}
	else
		desc "power cyc on ($CYC_SHAPE)"
		cyc_power_on
	fi
}

# rmdir of cyc while its load runs: null_blk's rule is that rmdir powers
# the device off and drops its data; then cyc is made again.
op_rmdir() {
	desc "rmdir cyc (power=$CYC_ON, under I/O), mkdir it again"
	rmdir "$CYC" 2>"$S/err" || {
		ERR="rmdir cyc failed: $(cat "$S/err")"
		return 1
	}
	CYC_ON=0
	[ ! -e "/sys/block/$CYC_DEV" ] || {
		ERR="$CYC_DEV still there after rmdir"
		return 1
	}
	cyc_create
}

# A setting of cyc: taken while it is off, EBUSY and unchanged while on.
# Left out: what the run's layout rests on (size, memory_backed, index,
# host_tags), shared_tags (power on refuses a shape other than the module
# tag set's, and cyc's is drawn), and badblocks_once (the load would clear
# the bad ranges op_bbio and op_badblocks read back). Queue counts are
# op_queues'.
op_setting() {
	pick irqmode completion_nsec hw_queue_depth blocking blocksize no_sched mbps cache_size \
		badblocks_partial_io time_slice_us rotational_model rotational discard fua max_sectors
	_a=$R
	case $_a in
	irqmode) pick 0 1 2 ;;
	completion_nsec) pick 0 5000 50000 ;;
	hw_queue_depth) pick 1 2 8 32 64 ;;
	blocksize) pick 512 1024 4096 ;;
	max_sectors) pick 8 64 256 2560 65535 ;;
	mbps) pick 0 20 200 ;;
	cache_size) pick 0 4 16 ;;
	time_slice_us) pick 0 100 1000 ;;
	*) pick 0 1 ;;
	esac
	_v=$R
	if [ "$CYC_ON" = 1 ]; then
		desc "cyc/$_a=$_v while powered: EBUSY"
	else
		desc "cyc/$_a=$_v (powered off)"
	fi
	val "$CYC/$_a"
	_before=$V
	if wr "$CYC/$_a" "$_v"; then
		[ "$CYC_ON" = 0 ] || {
			ERR="cyc/$_a=$_v taken while powered on"
			return 1
		}
		expect_val "$CYC/$_a" "$_v" || return 1
		CYC_SHAPE=$(echo " $CYC_SHAPE " | sed "s/ $_a=[^ ]* / $_a=$_v /; s/^ //; s/ \$//")
		return 0
	fi
	[ "$CYC_ON" = 1 ] || {
		ERR="cyc/$_a=$_v refused while powered off: $WHY"
		return 1
	}
	refused_with busy && expect_val "$CYC/$_a" "$_before"
}

# submit_queues or poll_queues of a powered configfs device, under I/O.
# Refused (EINVAL, nothing changed): more than the possible CPUs, poll
# queues on a tag set made without, any change of the rotational model's.
op_queues() {
	if [ "$CYC_ON" = 1 ]; then pick live cyc; else R=live; fi
	_dir=$CFS/$R
	_dev=rnullb2
	[ "$R" = cyc ] && _dev=$CYC_DEV
	pick submit_queues poll_queues
	_a=$R
	if [ "$_a" = submit_queues ]; then
		rnd $((CPUS + 1))
		_v=$((R + 1))
	else
		rnd $((CPUS + 2))
		_v=$R
	fi
	val "$_dir/submit_queues"
	_sq=$V
	val "$_dir/poll_queues"
	_pq=$V
	[ "$_a" = submit_queues ] && _sq=$_v
	[ "$_a" = poll_queues ] && _pq=$_v
	_made_poll=1
	_model=0
	if [ "$_dev" = "$CYC_DEV" ]; then
		_made_poll=$CYC_POLL0
		_model=$CYC_MODEL
	fi
	_why=""
	if [ "$_model" = 1 ]; then
		_why="rotational_model"
	elif [ "$_v" -gt "$CPUS" ]; then
		_why="possible CPUs"
	elif [ "$_pq" -gt 0 ] && [ "$_made_poll" = 0 ]; then
		_why="without poll queues"
	fi
	if [ -n "$_why" ]; then
		desc "${_dir##*/}/$_a=$_v (under I/O): EINVAL, $_why"
	else
		desc "${_dir##*/}/$_a=$_v (under I/O)"
	fi
	nr_hctx "$_dev"
	_hctx=$N
	val "$_dir/$_a"
	_before=$V
	if ! wr "$_dir/$_a" "$_v"; then
		[ -n "$_why" ] || {
			ERR="refused: $WHY"
			return 1
		}
		refused_with "Invalid argument" || return 1
		expect_val "$_dir/$_a" "$_before" || return 1
		nr_hctx "$_dev"
		[ "$N" = "$_hctx" ] || {
			ERR="$N hardware queues after a refused change, $_hctx before"
			return 1
		}
		return 0
	fi
	[ -z "$_why" ] || {
		ERR="taken, but should be refused ($_why)"
		return 1
	}
	expect_val "/sys/block/$_dev/rnull/submit_queues" "$_sq" &&
		expect_val "/sys/block/$_dev/rnull/poll_queues" "$_pq" || return 1
	nr_hctx "$_dev"
	[ "$N" = $((_sq + _pq)) ] || {
		ERR="$N hardware queue directories for $_sq submit + $_pq poll queues"
		return 1
	}
}

# badblocks_list: the table of cyc, one "first count" per line, in BB.
badblocks_list() { BB=$(cat "$CYC/badblocks"); }

# bb_covered FIRST LAST: N = sectors of FIRST..LAST the table covers.
bb_covered() {
	N=$(echo "$BB" | awk -v f="$1" -v l="$2" 'NF == 2 {
		a = $1; b = $1 + $2 - 1
		if (a < f) a = f
		if (b > l) b = l
		if (b >= a) n += b - a + 1
	} END { print n + 0 }')
}

# badblocks +first-last or -first-last on cyc, on or off, under its load;
# the table then covers the range or none of it. A full table refuses
# with ENOSPC and keeps what it had.
op_badblocks() {
	badblocks_list
	_n=$(echo "$BB" | grep -c .)
	pick + -
	_op=$R
	if [ "$_op" = - ] && [ "$_n" -gt 0 ]; then
		# A range of the table, or a part of one (which may split it).
		rnd "$_n"
		# shellcheck disable=SC2046 # "first count"
		set -- $(echo "$BB" | sed -n "$((R + 1))p")
		rnd "$2"
		_f=$(($1 + R))
		rnd $(($1 + $2 - _f))
		_l=$((_f + R))
	else
		rnd $((BB_END - 2048 - 64))
		_f=$((2048 + R))
		rnd 64
		_l=$((_f + R))
	fi
	desc "cyc/badblocks $_op$_f-$_l (power=$CYC_ON, $_n ranges)"
	if ! wr "$CYC/badblocks" "$_op$_f-$_l"; then
		_old=$BB
		badblocks_list
		case "$WHY" in
		*"No space left"*)
			[ "$BB" = "$_old" ] || {
				ERR="the table changed when a full one refused $_op$_f-$_l"
				return 1
			}
			return 0
			;;
		esac
		ERR="refused: $WHY"
		return 1
	fi
	badblocks_list
	bb_covered "$_f" "$_l"
	if [ "$_op" = + ]; then
		[ "$N" = $((_l - _f + 1)) ] || {
			ERR="the table covers $N of the $((_l - _f + 1)) sectors marked bad"
			return 1
		}
	else
		[ "$N" = 0 ] || {
			ERR="the table still covers $N sectors of a range marked good"
			return 1
		}
	fi
}

# The data written once: the verify devices' sentinels, cyc's pattern.
op_data() {
	desc "the sentinels of $VERIFY_DEVS and cyc's pattern (power=$CYC_ON) read back"
	sentinels_check || return 1
	[ "$CYC_ON" = 0 ] || cyc_check_data
}

# A read touching a bad sector of cyc fails with EIO; one of the pattern
# succeeds.
op_bbio() {
	badblocks_list
	_n=$(echo "$BB" | grep -c .)
	if [ "$CYC_ON" = 0 ] || [ "$_n" = 0 ]; then
		desc "read cyc's pattern (power=$CYC_ON, $_n bad ranges)"
		[ "$CYC_ON" = 0 ] || cyc_check_data
		return
	fi
	rnd "$_n"
	# shellcheck disable=SC2046 # "first count"
	set -- $(echo "$BB" | sed -n "$((R + 1))p")
	# 4 KiB aligned: cyc's blocks may be 4 KiB.
	_s=$(($1 / 8 * 8))
	desc "read $CYC_DEV sectors $_s..$((_s + 7)) (bad from $1): EIO"
	sector-io read "/dev/$CYC_DEV" "$_s" 8 2>"$S/err"
	_rc=$?
	[ $_rc = 3 ] || {
		ERR="sector-io exit $_rc, not 3 (EIO): $(cat "$S/err")"
		return 1
	}
	cyc_check_data
}
