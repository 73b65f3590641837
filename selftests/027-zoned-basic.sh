#!/bin/sh
# Zoned mode (zoned=1, null_blk's parameters and configfs attributes): on
# a kernel without CONFIG_BLK_DEV_ZONED the device is refused with a line
# saying so (and the test skips); on a zoned kernel the queue reports a
# host-managed device with null_blk's limits, blkzone (util-linux) reports
# every zone as ZBC says, writes are taken at the write pointer only, data
# reads back, zone management (open, close, finish, reset, reset all) moves
# the write pointer and conditions as ZBC says under the open limit,
# memory-backed and not; through configfs, zone_offline / zone_readonly
# take a sector of a powered zoned device only, and a memory-backed
# device's zones and data outlive a power cycle. Hostile zoned settings:
# 028; fio verify: 029; file systems: 105.
. "$(dirname "$0")/lib.sh"
command -v sector-io >/dev/null || skip "the sector-io tool is missing"
command -v blkzone >/dev/null || skip "blkzone (util-linux) is missing"

require_zoned

# 64 MiB zones: 131072 sectors (0x20000).
zs=131072
# zone N: the first sector of zone N.
zone() { echo $(($1 * zs)); }
# report SECTOR: blkzone's line for the zone of SECTOR. Also what the
# block layer needs after a failed write before the zone takes writes
# again: a report gives its zone write plug the write pointer back.
report() { blkzone report -o "$1" -c 1 "$dev"; }
# wp SECTOR: the write pointer blkzone reports, from the zone's start.
wp() { echo $((0x$(report "$1" | sed -n 's/.*wptr 0x\([0-9a-f]*\) .*/\1/p'))); }
# cond SECTOR: the zone's condition as blkzone prints it ("2(oi)").
cond() { report "$1" | sed -n 's/.*zcond: *\([0-9]*([a-z]*)\).*/\1/p'; }
# eio WHAT sector-io ARGS...: the transfer fails with EIO.
eio() {
	what=$1
	shift
	"$@" 2>/dev/null
	expect_eq "$?" 3 "$what: EIO"
}

load_rnull zoned=1 gb=1 zone_size=64 zone_nr_conv=1 zone_max_open=4 zone_max_active=6 memory_backed=1
dev=/dev/rnullb0
q=/sys/block/rnullb0/queue
expect_eq "$(cat $q/zoned)" host-managed "queue/zoned"
expect_eq "$(cat $q/chunk_sectors)" $zs "queue/chunk_sectors"
expect_eq "$(cat $q/nr_zones)" 16 "queue/nr_zones"
expect_eq "$(cat $q/max_open_zones)" 4 "queue/max_open_zones"
expect_eq "$(cat $q/max_active_zones)" 6 "queue/max_active_zones"
expect_eq "$(blkzone report $dev | wc -l)" 16 "zones in blkzone's report"
# util-linux 2.38's line: the write pointer from the zone's start (0 for
# a conventional zone), the condition and type as numbers and names.
expect_eq "$(report 0)" \
	"  start: 0x000000000, len 0x020000, cap 0x020000, wptr 0x000000 reset:0 non-seq:0, zcond: 0(nw) [type: 1(CONVENTIONAL)]" \
	"zone 0 (conventional)"
expect_eq "$(report "$(zone 15)")" \
	"  start: 0x0001e0000, len 0x020000, cap 0x020000, wptr 0x000000 reset:0 non-seq:0, zcond: 1(em) [type: 2(SEQ_WRITE_REQUIRED)]" \
	"zone 15 (sequential, empty)"

z1=$(zone 1)
head -c 4096 /dev/urandom >/tmp/zdata
head -c 8192 /dev/urandom >/tmp/zdata2
sector-io write $dev "$z1" 8 /tmp/zdata || fail "write at zone 1's write pointer failed"
expect_eq "$(report "$z1")" \
	"  start: 0x000020000, len 0x020000, cap 0x020000, wptr 0x000008 reset:0 non-seq:0, zcond: 2(oi) [type: 2(SEQ_WRITE_REQUIRED)]" \
	"zone 1 after 8 sectors"
# Writes off the write pointer fail and change nothing; the block layer
# (zone write plugging) fails them before they reach the driver, whose
# own check rzone's tests cover.
eio "write behind the write pointer" sector-io write $dev "$z1" 8 /tmp/zdata
expect_eq "$(wp "$z1")" 8 "zone 1's write pointer after the refused write"
eio "write past the write pointer" sector-io write $dev $((z1 + 16)) 8 /tmp/zdata
expect_eq "$(wp "$z1")" 8 "zone 1's write pointer after the refused write"
sector-io write $dev $((z1 + 8)) 16 /tmp/zdata2 || fail "write at the new write pointer failed"
expect_eq "$(wp "$z1")" 24 "zone 1's write pointer"
sector-io read $dev "$z1" 8 /tmp/zback || fail "read of zone 1 failed"
cmp -s /tmp/zdata /tmp/zback || fail "zone 1's first write does not read back"
sector-io read $dev $((z1 + 8)) 16 /tmp/zback || fail "read of zone 1 failed"
cmp -s /tmp/zdata2 /tmp/zback || fail "zone 1's second write does not read back"
log "ok: zone 1 written at its write pointer only, read back"
# The conventional zone takes writes anywhere, and keeps no write pointer.
sector-io write $dev 1000 8 /tmp/zdata || fail "write to the conventional zone failed"
sector-io write $dev 8 8 /tmp/zdata || fail "write behind it in the conventional zone failed"
expect_eq "$(cond 0)" "0(nw)" "zone 0 after writes"
blkzone reset -o "$z1" -c 1 $dev || fail "blkzone reset of zone 1 failed"
expect_eq "$(report "$z1")" \
	"  start: 0x000020000, len 0x020000, cap 0x020000, wptr 0x000000 reset:0 non-seq:0, zcond: 1(em) [type: 2(SEQ_WRITE_REQUIRED)]" \
	"zone 1 after a reset"
sector-io write $dev "$z1" 8 /tmp/zdata || fail "write after the reset failed"
expect_eq "$(wp "$z1")" 8 "zone 1's write pointer after the reset and a write"
unload_rnull

for mb in 1 0; do
	load_rnull zoned=1 gb=1 zone_size=64 zone_nr_conv=2 zone_max_open=4 zone_max_active=6 memory_backed=$mb
	z3=$(zone 3)
	blkzone open -o "$z3" -c 1 $dev || fail "blkzone open"
	expect_eq "$(cond "$z3")" "3(oe)" "zone 3 after open"
	blkzone close -o "$z3" -c 1 $dev || fail "blkzone close"
	# An open zone with nothing written closes to empty (ZBC).
	expect_eq "$(cond "$z3")" "1(em)" "zone 3 after close"
	sector-io write $dev "$z3" 8 /tmp/zdata || fail "write to zone 3"
	expect_eq "$(cond "$z3")" "2(oi)" "zone 3 after a write"
	blkzone close -o "$z3" -c 1 $dev || fail "blkzone close of a written zone"
	expect_eq "$(cond "$z3")" "4(cl)" "zone 3 closed"
	expect_eq "$(wp "$z3")" 8 "zone 3's write pointer, closed"
	blkzone finish -o "$z3" -c 1 $dev || fail "blkzone finish"
	expect_eq "$(cond "$z3")" "14(fu)" "zone 3 finished"
	expect_eq "$(wp "$z3")" $zs "zone 3's write pointer, full"
	eio "write to a full zone" sector-io write $dev $((z3 + 8)) 8 /tmp/zdata
	# The open limit (4; zone 3 is full, so not active): four explicit
	# opens are taken, a fifth is refused until one closes.
	for z in 4 5 6 7; do
		blkzone open -o "$(zone $z)" -c 1 $dev || fail "blkzone open of zone $z"
	done
	if blkzone open -o "$(zone 8)" -c 1 $dev 2>/dev/null; then
		fail "a fifth zone opened past zone_max_open=4"
	fi
	expect_eq "$(cond "$(zone 8)")" "1(em)" "zone 8 after the refused open"
	blkzone close -o "$(zone 4)" -c 1 $dev || fail "blkzone close of zone 4"
	blkzone open -o "$(zone 8)" -c 1 $dev || fail "blkzone open of zone 8 after a close"
	expect_eq "$(blkzone report $dev | grep -c '3(oe)')" 4 "explicitly open zones"
	blkzone reset $dev || fail "blkzone reset of all zones"
	expect_eq "$(cond "$z3")" "1(em)" "zone 3 after reset all"
	expect_eq "$(blkzone report $dev | grep -c ' 1(em)')" 14 "empty zones after reset all"
	expect_eq "$(blkzone report $dev | grep -c ' 0(nw)')" 2 "conventional zones after reset all"
	if [ $mb = 1 ]; then
		# A reset zone reads as never written (null_blk's zeroes).
		sector-io read $dev "$z3" 8 /tmp/zback || fail "read of a reset zone"
		head -c 4096 /dev/zero >/tmp/zzero
		cmp -s /tmp/zzero /tmp/zback || fail "a reset zone reads back data"
	fi
	log "ok: memory_backed=$mb: open, close, finish, reset (all), open limit as ZBC"
	unload_rnull
done

# configfs: zone_offline / zone_readonly, and a power cycle.
cfs=/sys/kernel/config/rnull
load_rnull nr_devices=0
features=$(cat $cfs/features)
for a in zoned zone_size zone_capacity zone_nr_conv zone_max_open zone_max_active \
	zone_append_max_sectors zone_full zone_offline zone_readonly; do
	echo ",$features," | grep -q ",$a," || fail "features does not list $a"
done
d=$cfs/z
mkdir $d || fail "mkdir $d"
echo 1024 >$d/size && echo 1 >$d/memory_backed && echo 64 >$d/zone_size &&
	echo 2 >$d/zone_nr_conv || fail "size, memory_backed, zone_size, zone_nr_conv"

# cond_refused FILE VALUE WHY: the write fails and the log names WHY.
cond_refused() {
	kmsg_mark
	if echo "$2" >"$d/$1" 2>/dev/null; then fail "$1 took '$2': $3"; fi
	kmsg_since | grep -qF "$3" || fail "$1 '$2': no log line with '$3'"
	log "ok: $1 '$2' refused: $3"
}
cond_refused zone_offline 0 "the device is not zoned"
echo 1 >$d/zoned || fail "zoned=1"
cond_refused zone_offline 0 "the device is not yet powered"
echo 1 >$d/power || fail "power on"
dev=/dev/rnullb0
z2=$(zone 2) z3=$(zone 3) z4=$(zone 4)
expect_eq "$(cat /sys/block/rnullb0/queue/nr_zones)" 16 "configfs device's zones"
# Shown as written (null_blk's face shows null_blk's adjusted values: 028).
expect_eq "$(cat $d/zone_capacity) $(cat $d/zone_nr_conv)" "0 2" "zone_capacity, zone_nr_conv while on"
if echo 32 >$d/zone_size 2>/dev/null; then fail "zone_size changed while powered on"; fi
cond_refused zone_offline "$(zone 16)" "Sector out of range: must be a sector of the device, 0..=2097151"
cond_refused zone_readonly 0 "Can not change condition of conventional zones: must be a sector of a sequential zone, 262144..=2097151"
cond_refused zone_offline -1 "must be a sector"
sector-io write $dev "$z2" 8 /tmp/zdata || fail "write to zone 2"
sector-io write $dev "$z3" 8 /tmp/zdata || fail "write to zone 3"
echo "$z2" >$d/zone_offline || fail "zone_offline $z2"
echo $((z3 + 5)) >$d/zone_readonly || fail "zone_readonly in zone 3"
eio "read of an offline zone" sector-io read $dev "$z2" 8 /tmp/zback
sector-io read $dev "$z3" 8 /tmp/zback || fail "read of a read-only zone"
cmp -s /tmp/zdata /tmp/zback || fail "the read-only zone lost its data"
eio "write to a read-only zone" sector-io write $dev $((z3 + 8)) 8 /tmp/zdata
expect_eq "$(cond "$z2")" "15(of)" "zone 2 offline in the report"
expect_eq "$(cond "$z3")" "13(ro)" "zone 3 read-only in the report"
# The same condition again gives the zone back, empty (null_blk's).
echo "$z2" >$d/zone_offline || fail "zone_offline $z2 again"
expect_eq "$(cond "$z2")" "1(em)" "zone 2 back from offline"
# The block layer's zone write plug kept the write pointer it had before
# the change made behind its back; a reset gives it the zone's.
blkzone reset -o "$z2" -c 1 $dev || fail "blkzone reset of zone 2"
sector-io write $dev "$z2" 8 /tmp/zdata || fail "write to zone 2 back from offline"
log "ok: zone_offline / zone_readonly through configfs"

# A power cycle keeps a memory-backed device's zones with its data.
sector-io write $dev "$z4" 16 /tmp/zdata2 || fail "write to zone 4"
echo 0 >$d/power && echo 1 >$d/power || fail "power cycle"
expect_eq "$(cond "$z3")" "13(ro)" "zone 3 after a power cycle"
expect_eq "$(report "$z4")" \
	"  start: 0x000080000, len 0x020000, cap 0x020000, wptr 0x000010 reset:0 non-seq:0, zcond: 2(oi) [type: 2(SEQ_WRITE_REQUIRED)]" \
	"zone 4 after a power cycle"
sector-io read $dev "$z4" 16 /tmp/zback || fail "read of zone 4 after a power cycle"
cmp -s /tmp/zdata2 /tmp/zback || fail "zone 4's data lost in a power cycle"
sector-io write $dev $((z4 + 16)) 8 /tmp/zdata || fail "write at zone 4's kept write pointer"
# A new zone geometry starts from empty zones.
echo 0 >$d/power && echo 32 >$d/zone_size && echo 1 >$d/power || fail "power cycle to 32 MiB zones"
expect_eq "$(cat /sys/block/rnullb0/queue/nr_zones)" 32 "zones after the geometry changed"
expect_eq "$(blkzone report $dev | grep -c ' 1(em)')" 30 "empty zones after the geometry changed"
log "ok: zones and data kept across a power cycle, new zones for a new geometry"
echo 0 >$d/power || fail "power off"
rmdir $d || fail "rmdir"
unload_rnull
