# shellcheck shell=sh
# The devices of a stress run.
#
# rnullb0, rnullb1: load-time, memory-backed, in the host budget (32 tags);
# rnullb2: configfs "live", the same, with a poll queue; its hardware
#   queues change while fio verifies it;
# rnullb3: configfs "cyc", memory-backed, in the budget, its shape drawn
#   at each mkdir; powered off and on, removed and made again, marked bad,
#   under fio that ignores its errors. Its first MiB holds a pattern that
#   must outlive every power cycle (null_blk keeps a configfs device's data
#   until rmdir); bad ranges and the load stay above it.
# fio verifies rnullb0..2 only: they are never powered off. fio rewrites
# its 4 MiB in every round; 1 MiB of its own pattern (the sentinel, at
# 32 MiB) on each of them is written once and read back through the run,
# so that a stray write or a lost page shows whenever it happened.

CFS=/sys/kernel/config/rnull
LIVE=$CFS/live
CYC=$CFS/cyc
H=/sys/module/rnull/host
CYC_DEV=rnullb3
VERIFY_DEVS="rnullb0 rnullb1 rnullb2"
# cyc: 256 MiB; the pattern in sectors 0..2047, bad ranges in
# 2048..BB_END-1.
CYC_SECTORS=$((256 << 11))
BB_END=$((128 << 11))
# The sentinels' first sector.
SENTINEL=$((32 << 11))
# The largest rate rtags takes (rtags::link::MAX_MIB_PER_S).
MAX_MIBPS=1048576

# disks: DISKS = the rnull disks there now.
disks() {
	DISKS=$VERIFY_DEVS
	[ "$CYC_ON" = 1 ] && DISKS="$DISKS $CYC_DEV"
}

# pick_disk: R = one of the disks there now.
pick_disk() {
	disks
	# shellcheck disable=SC2086 # one word per disk
	pick $DISKS
}

# setup_devices: load rnull and the schedulers, make live and cyc.
setup_devices() {
	for _m in mq-deadline bfq; do
		[ -f "$RNULL_MODDIR/$_m.ko" ] && insmod "$RNULL_MODDIR/$_m.ko" 2>/dev/null
	done
	insmod "$RNULL_MODDIR/rnull.ko" nr_devices=2 host_queue_depth=32 memory_backed=1 gb=1 \
		submit_queues="$CPUS" poll_queues=1 || {
		ERR="insmod rnull failed"
		return 1
	}
	mkdir "$LIVE" || {
		ERR="mkdir $LIVE failed"
		return 1
	}
	set_all "$LIVE" size=64 memory_backed=1 index=2 host_tags=1 submit_queues="$CPUS" \
		poll_queues=1 power=1 || return 1
	dd if=/dev/urandom of="$S/pattern" bs=64k count=16 2>/dev/null
	for _d in $VERIFY_DEVS; do
		dd if=/dev/urandom of="$S/sentinel.$_d" bs=64k count=16 2>/dev/null
		if ! sector-io write "/dev/$_d" $SENTINEL 2048 "$S/sentinel.$_d" 2>"$S/err"; then
			ERR="writing the sentinel of $_d failed: $(cat "$S/err")"
			return 1
		fi
	done
	CYC_ON=0
	cyc_create
}

# sentinels_check: each verify device still holds its sentinel.
sentinels_check() {
	for _d in $VERIFY_DEVS; do
		if ! sector-io read "/dev/$_d" $SENTINEL 2048 "$S/got" 2>"$S/err"; then
			ERR="reading the sentinel of $_d failed: $(cat "$S/err")"
			return 1
		fi
		cmp -s "$S/got" "$S/sentinel.$_d" && continue
		_at=$(cmp "$S/got" "$S/sentinel.$_d" 2>&1 | sed -n 's/.*differ: char \([0-9]*\).*/\1/p')
		ERR="$_d: the sentinel changed from its byte $((_at - 1)) (sector $((SENTINEL + (_at - 1) / 512))) on"
		return 1
	done
}

# cyc_create: mkdir cyc with a shape drawn from the sequence, power it on
# and write its pattern.
cyc_create() {
	mkdir "$CYC" || {
		ERR="mkdir $CYC failed"
		return 1
	}
	# One draw per setting, in this order.
	pick 0 1 2
	_irq=$R
	pick 0 10000 100000
	_cns=$R
	pick 1 4 16 64
	_depth=$R
	rnd "$CPUS"
	_subq=$((R + 1))
	pick 0 1
	_pollq=$R
	pick 0 0 1
	_blocking=$R
	pick 512 4096
	_bs=$R
	pick 0 0 1
	_nosched=$R
	pick 0 0 0 50 500
	_mbps=$R
	pick 0 0 0 1
	_model=$R
	pick 0 0 8
	_cache=$R
	pick 0 1
	_partial=$R
	pick 0 0 200
	_slice=$R
	CYC_SHAPE="irqmode=$_irq completion_nsec=$_cns hw_queue_depth=$_depth submit_queues=$_subq"
	CYC_SHAPE="$CYC_SHAPE poll_queues=$_pollq blocking=$_blocking blocksize=$_bs no_sched=$_nosched"
	CYC_SHAPE="$CYC_SHAPE mbps=$_mbps rotational_model=$_model cache_size=$_cache"
	CYC_SHAPE="$CYC_SHAPE badblocks_partial_io=$_partial time_slice_us=$_slice"
	# shellcheck disable=SC2086 # one word per setting
	set_all "$CYC" size=$((CYC_SECTORS >> 11)) memory_backed=1 index=3 host_tags=1 $CYC_SHAPE ||
		return 1
	CYC_DATA=0
	cyc_power_on || return 1
	if ! sector-io write "/dev/$CYC_DEV" 0 2048 "$S/pattern" 2>"$S/err" ||
		! sector-io flush "/dev/$CYC_DEV" 2>>"$S/err"; then
		ERR="writing the pattern to $CYC_DEV failed: $(cat "$S/err") ($(cyc_node))"
		return 1
	fi
	CYC_DATA=1
	echo "# cyc: $CYC_SHAPE"
}

# cyc_power_on: power=1; the disk appears and still holds the pattern.
cyc_power_on() {
	wr "$CYC/power" 1 || {
		ERR="cyc: power=1 refused ($CYC_SHAPE): $WHY"
		return 1
	}
	[ -e "/sys/block/$CYC_DEV" ] || {
		ERR="cyc: no $CYC_DEV after power=1"
		return 1
	}
	CYC_ON=1
	# devtmpfs makes the node soon after.
	_t=0
	while [ ! -b "/dev/$CYC_DEV" ]; do
		_t=$((_t + 1))
		[ $_t -le 50 ] || {
			ERR="cyc: /dev/$CYC_DEV is not a block device 5 s after power=1"
			return 1
		}
		usleep 100000
	done
	# What the tag set was made with: poll queues only if it had some.
	val "/sys/block/$CYC_DEV/rnull/poll_queues"
	CYC_POLL0=$V
	val "$CYC/rotational_model"
	CYC_MODEL=$V
	[ "$CYC_DATA" = 1 ] || return 0
	cyc_check_data
}

# cyc_node: what /dev and sysfs say about cyc's disk (for a failure).
cyc_node() {
	# shellcheck disable=SC2012 # a node's type and numbers, as ls shows them
	_n=$(ls -l "/dev/$CYC_DEV" 2>&1 | sed 's/  */ /g')
	_s=$(cat "/sys/block/$CYC_DEV/dev" 2>&1)
	echo "/dev: $_n; /sys/block/$CYC_DEV/dev: $_s"
}

# cyc_check_data: the first MiB of cyc is the pattern.
cyc_check_data() {
	sector-io read "/dev/$CYC_DEV" 0 2048 "$S/got" 2>"$S/err" || {
		ERR="reading the pattern back from $CYC_DEV failed: $(cat "$S/err") ($(cyc_node))"
		return 1
	}
	cmp -s "$S/got" "$S/pattern" && return 0
	# Where it starts to differ, and whether it reads as zeros.
	_at=$(cmp "$S/got" "$S/pattern" 2>&1 | sed -n 's/.*differ: char \([0-9]*\).*/\1/p')
	_nz=$(tr -d '\0' <"$S/got" | wc -c)
	ERR="$CYC_DEV: the first MiB is not the pattern written at mkdir: from byte $((_at - 1)) (sector $(((_at - 1) / 512))) on; $_nz bytes of it are not zero"
	return 1
}

# teardown_devices: remove cyc and live, unload rnull.
teardown_devices() {
	for _d in "$CYC" "$LIVE"; do
		[ -d "$_d" ] || continue
		rmdir "$_d" || {
			ERR="rmdir $_d failed"
			return 1
		}
	done
	rmmod rnull 2>"$S/err" || {
		ERR="rmmod rnull failed once idle: $(cat "$S/err")"
		return 1
	}
	[ ! -d /sys/module/rnull ] || {
		ERR="rnull still loaded after rmmod"
		return 1
	}
}
