#!/bin/sh
# Hostile zoned settings. rnull refuses each with EINVAL and a log line
# naming the parameter, its range and the value, and nothing changes: as
# module parameters (the load fails), as configfs attributes (power on
# fails, no disk, the attributes keep what was written) and in
# zone_offline / zone_readonly (no zone changes). Those null_blk refuses
# too (zone size not a power of two or above the device, capacity above
# the zone size, a smaller last zone with a smaller capacity) keep
# null_blk's message first. What C null_blk adjusts instead (conventional
# zones not below the zone count, open or active limits not below the
# sequential zones, open above active) rnull's null_blk face adjusts as
# it does, with the same log lines as C null_blk's, shown adjusted in
# configfs.
. "$(dirname "$0")/lib.sh"
command -v blkzone >/dev/null || skip "blkzone (util-linux) is missing"

FACE_KO=$RNULL_MODDIR/null_blk-rnull.ko
C_KO=$RNULL_MODDIR/null_blk.ko
cleanup_zoned() {
	for d in /sys/kernel/config/nullb/*/; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	rmmod null_blk 2>/dev/null
	cleanup_rnull
}
trap cleanup_zoned EXIT

require_zoned

# The messages, for 1 GiB of 64 MiB zones (16 zones).
pow2="zone_size must be non-zero power-of-two: zone_size=48 MB, must be a power of two in 1..=1024 (MB, the device size)"
above_dev="zone_size (2048 MB) larger than device capacity (1024 MB): zone_size must be a power of two in 1..=1024 (MB)"
cap="zone capacity (128 MB) larger than zone size (64 MB): zone_capacity must be in 0..=64 (MB, 0 = zone_size)"
last="A smaller last zone is not allowed with zone capacity smaller than zone size: zone_capacity=32 MB below zone_size=64 MB needs a size that is a multiple of zone_size, not 1000 MB"
conv="zone_nr_conv=100 out of range 0..=15 (fewer than the device's 16 zones, one stays sequential)"
active="zone_max_active=14 out of range 0..=13 (0 = no limit, else below the 14 sequential zones)"
open="zone_max_open=16 out of range 0..=15 (0 = no limit, else below the 16 sequential zones)"
open_active="zone_max_open=6 out of range 0..=4 (0 = no limit, else at most zone_max_active)"

# param_refused WHY ARGS...: the load fails with EINVAL's line naming WHY.
param_refused() {
	why=$1
	shift
	kmsg_mark
	if insmod "$RNULL_KO" zoned=1 "$@" 2>/dev/null; then
		rmmod rnull
		fail "insmod rnull zoned=1 $* was accepted"
	fi
	kmsg_since | grep -qF "rnull: $why (-EINVAL)" || fail "zoned=1 $*: no log line 'rnull: $why (-EINVAL)'"
	! rnull_loaded || fail "rnull loaded after zoned=1 $*"
	log "ok: zoned=1 $* refused: $why"
}
param_refused "$pow2" gb=1 zone_size=48
param_refused "$above_dev" gb=1 zone_size=2048
param_refused "$cap" gb=1 zone_size=64 zone_capacity=128
param_refused "$conv" gb=1 zone_size=64 zone_nr_conv=100
param_refused "$active" gb=1 zone_size=64 zone_nr_conv=2 zone_max_active=14
param_refused "$open" gb=1 zone_size=64 zone_max_open=16
param_refused "$open_active" gb=1 zone_size=64 zone_max_active=4 zone_max_open=6
# The top of each range is taken as it is.
load_rnull zoned=1 gb=1 zone_size=64 zone_nr_conv=2 zone_max_active=13 zone_max_open=13
q=/sys/block/rnullb0/queue
expect_eq "$(cat $q/max_active_zones) $(cat $q/max_open_zones)" "13 13" "limits at the top of their range"
expect_eq "$(cat /sys/module/rnull/parameters/zone_nr_conv)" 2 "zone_nr_conv"
unload_rnull
load_rnull zoned=1 gb=1 zone_size=64 zone_nr_conv=15
expect_eq "$(blkzone report /dev/rnullb0 | grep -c 'CONVENTIONAL')" 15 "conventional zones with zone_nr_conv=15"
unload_rnull

# configfs: power on fails with the same line, prefixed by the directory;
# nothing is made and every attribute keeps what was written.
cfs=/sys/kernel/config/rnull
load_rnull nr_devices=0
d=$cfs/z
mkdir $d || fail "mkdir $d"
good="size=1024 memory_backed=1 zoned=1 zone_size=64 zone_capacity=0 zone_nr_conv=0 zone_max_open=0 zone_max_active=0"
set_attrs() { for av in "$@"; do echo "${av#*=}" >$d/"${av%%=*}" || fail "set $av"; done; }
show_attrs() {
	for av in $good; do printf '%s=%s ' "${av%%=*}" "$(cat $d/"${av%%=*}")"; done
}
# power_refused WHY ATTR=VALUE...: with the good settings but these,
# power on fails naming WHY and changes nothing.
power_refused() {
	why=$1
	shift
	set_attrs $good "$@"
	before=$(show_attrs)
	kmsg_mark
	if echo 1 >$d/power 2>/dev/null; then fail "power on with $* accepted"; fi
	kmsg_since | grep -qF "rnull/z: $why (-EINVAL)" || fail "$*: no log line 'rnull/z: $why (-EINVAL)'"
	expect_eq "$(cat $d/power)" 0 "power after $*"
	[ -z "$(ls /sys/block | grep '^rnullb')" ] || fail "a disk was made with $*"
	expect_eq "$(show_attrs)" "$before" "the attributes after the refused power on"
	log "ok: power on with $* refused: $why"
}
power_refused "$pow2" zone_size=48
power_refused "$above_dev" zone_size=2048
power_refused "$cap" zone_capacity=128
power_refused "$last" size=1000 zone_capacity=32
power_refused "$conv" zone_nr_conv=100
power_refused "$active" zone_nr_conv=2 zone_max_active=14
power_refused "$open" zone_max_open=16
power_refused "$open_active" zone_max_active=4 zone_max_open=6

# zone_offline / zone_readonly past the last zone: refused naming the
# range, no zone changes.
set_attrs $good zone_nr_conv=1
echo 1 >$d/power || fail "power on with good settings"
before=$(blkzone report /dev/rnullb0)
for a in zone_offline zone_readonly; do
	for s in 2097152 $((1 << 40)); do
		kmsg_mark
		if echo $s >$d/$a 2>/dev/null; then fail "$a took $s, past the end"; fi
		kmsg_since | grep -qF "invalid value '$s' for configfs rnull/z/$a: Sector out of range: must be a sector of the device, 0..=2097151; nothing changed" ||
			fail "$a $s: no log line naming the range"
	done
done
expect_eq "$(blkzone report /dev/rnullb0)" "$before" "the zones after the refused writes"
log "ok: zone_offline / zone_readonly past the end refused, no zone changed"
echo 0 >$d/power && rmdir $d || fail "power off, rmdir"
unload_rnull

# The null_blk face adjusts what C null_blk adjusts, with its lines: the
# same as C null_blk's for the same parameters.
requires_file "$FACE_KO"
requires_file "$C_KO"
# adjusted KO ARGS...: the adjustment lines KO logs as it loads with ARGS.
adjusted() {
	ko=$1
	shift
	kmsg_mark
	insmod "$ko" zoned=1 gb=1 zone_size=64 "$@" || fail "insmod $ko zoned=1 $* failed"
	kmsg_since | grep -E 'null_blk: (changed|zone_max_)' | sed 's/^\[[^]]*\] //'
	rmmod null_blk || fail "rmmod null_blk"
}
for args in "zone_nr_conv=100" "zone_nr_conv=2 zone_max_active=14 zone_max_open=20" \
	"zone_max_active=4 zone_max_open=6" "zone_max_open=16"; do
	c=$(adjusted "$C_KO" $args)
	[ -n "$c" ] || fail "C null_blk adjusted nothing with $args"
	expect_eq "$(adjusted "$FACE_KO" $args)" "$c" "the face's adjustments of $args"
done
insmod "$FACE_KO" zoned=1 gb=1 zone_size=64 zone_nr_conv=100 zone_max_open=100 ||
	fail "insmod the face with adjusted limits"
expect_eq "$(cat /sys/block/nullb0/queue/nr_zones)" 16 "the face's zones"
expect_eq "$(blkzone report /dev/nullb0 | grep -c 'CONVENTIONAL')" 15 "the face's conventional zones"
expect_eq "$(cat /sys/block/nullb0/queue/max_open_zones)" 0 "the face's open limit, disabled"
# configfs: adjusted at power on, shown adjusted.
fd=/sys/kernel/config/nullb/zf
mkdir $fd || fail "mkdir $fd"
echo 1024 >$fd/size && echo 1 >$fd/zoned && echo 64 >$fd/zone_size && echo 100 >$fd/zone_nr_conv &&
	echo 100 >$fd/zone_max_active && echo 100 >$fd/zone_max_open || fail "the face's zone attributes"
kmsg_mark
echo 1 >$fd/power || fail "the face's power on with adjusted limits"
for m in "changed the number of conventional zones to 15" \
	"zone_max_active limit disabled, limit >= zone count" \
	"zone_max_open limit disabled, limit >= zone count"; do
	kmsg_since | grep -qF "null_blk: nullb/zf: $m" || fail "the face's configfs power on: no '$m'"
done
expect_eq "$(cat $fd/zone_nr_conv) $(cat $fd/zone_max_active) $(cat $fd/zone_max_open) $(cat $fd/zone_capacity)" \
	"15 0 0 64" "the face's limits and capacity shown adjusted"
expect_eq "$(cat /sys/block/zf/queue/nr_zones)" 16 "the face's configfs device's zones"
echo 0 >$fd/power && rmdir $fd || fail "the face's power off, rmdir"
rmmod null_blk || fail "rmmod the face"
log "ok: the null_blk face adjusts as C null_blk, with its lines"
