#!/bin/sh
# Zoned mode (zoned=1, null_blk's parameters): on a kernel without
# CONFIG_BLK_DEV_ZONED the device is refused with a line saying so (and
# the test skips); on a zoned kernel the queue reports a host-managed
# device with null_blk's limits, writes are taken at the write pointer
# only (EIO elsewhere), data reads back, a zone reset moves the write
# pointer back, and hostile zoned settings are refused or adjusted with
# null_blk's messages.
. "$(dirname "$0")/lib.sh"
command -v sector-io >/dev/null || skip "the sector-io tool is missing"

# refused_zoned WHY ARGS...: the load fails and the log names WHY.
refused_zoned() {
	why=$1
	shift
	kmsg_mark
	if insmod "$RNULL_KO" zoned=1 "$@" 2>/dev/null; then
		rmmod rnull
		fail "insmod rnull zoned=1 $* was accepted"
	fi
	kmsg_since | grep -qF "$why" || fail "zoned=1 $*: no log line with '$why'"
	! rnull_loaded || fail "rnull loaded after zoned=1 $*"
	log "ok: zoned=1 $* refused: $why"
}

kmsg_mark
if ! insmod "$RNULL_KO" zoned=1 gb=1 zone_size=64 2>/dev/null; then
	kmsg_since | grep -q "needs a kernel with CONFIG_BLK_DEV_ZONED" ||
		fail "zoned=1 refused without saying why: $(kmsg_since | tail -n 3)"
	skip "the kernel has no CONFIG_BLK_DEV_ZONED"
fi
unload_rnull

refused_zoned "zone_size must be non-zero power-of-two" gb=1 zone_size=3
refused_zoned "zone capacity (128 MB) larger than zone size (64 MB)" gb=1 zone_size=64 zone_capacity=128
refused_zoned "larger than device capacity" gb=1 zone_size=2048

kmsg_mark
load_rnull zoned=1 gb=1 zone_size=64 zone_nr_conv=100 nr_devices=1
kmsg_since | grep -q "changed the number of conventional zones to 15" ||
	fail "zone_nr_conv=100 not adjusted with null_blk's message"
unload_rnull

load_rnull zoned=1 gb=1 zone_size=64 zone_nr_conv=1 zone_max_open=4 zone_max_active=6 memory_backed=1
q=/sys/block/rnullb0/queue
expect_eq "$(cat $q/zoned)" host-managed "queue/zoned"
expect_eq "$(cat $q/chunk_sectors)" 131072 "queue/chunk_sectors"
expect_eq "$(cat $q/nr_zones)" 16 "queue/nr_zones"
expect_eq "$(cat $q/max_open_zones)" 4 "queue/max_open_zones"
expect_eq "$(cat $q/max_active_zones)" 6 "queue/max_active_zones"

dev=/dev/rnullb0
z1=131072
head -c 4096 /dev/urandom >/tmp/zdata
sector-io write $dev $z1 8 /tmp/zdata || fail "write at zone 1's write pointer failed"
sector-io write $dev $z1 8 /tmp/zdata
expect_eq "$?" 3 "write behind the write pointer: EIO"
sector-io write $dev $((z1 + 16)) 8 /tmp/zdata
expect_eq "$?" 3 "write past the write pointer: EIO"
sector-io write $dev $((z1 + 8)) 8 /tmp/zdata || fail "write at the new write pointer failed"
sector-io read $dev $z1 8 /tmp/zback || fail "read of zone 1 failed"
cmp -s /tmp/zdata /tmp/zback || fail "zone 1's data does not read back"
log "ok: zone 1 written at its write pointer, read back"
# The conventional zone takes writes anywhere.
sector-io write $dev 1000 8 /tmp/zdata || fail "write to the conventional zone failed"

if command -v blkzone >/dev/null; then
	wp=$(blkzone report -o $z1 -c 1 $dev | sed -n 's/.*wptr 0x\([0-9a-f]*\).*/\1/p')
	expect_eq "$((0x$wp))" 16 "zone 1's write pointer"
	blkzone reset -o $z1 -c 1 $dev || fail "blkzone reset failed"
	wp=$(blkzone report -o $z1 -c 1 $dev | sed -n 's/.*wptr 0x\([0-9a-f]*\).*/\1/p')
	expect_eq "$((0x$wp))" 0 "zone 1's write pointer after a reset"
	sector-io write $dev $z1 8 /tmp/zdata || fail "write after the reset failed"
else
	log "blkzone is missing: report and reset not tried"
fi
unload_rnull
