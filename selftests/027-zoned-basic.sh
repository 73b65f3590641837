#!/bin/sh
# Zoned mode (zoned=1, null_blk's parameters and configfs attributes): on
# a kernel without CONFIG_BLK_DEV_ZONED the device is refused with a line
# saying so (and the test skips); on a zoned kernel the queue reports a
# host-managed device with null_blk's limits, writes are taken at the
# write pointer only (EIO elsewhere), data reads back, zone management
# (blkzone) moves the write pointer and conditions as ZBC says, fio's
# zonemode=zbd verifies its data over conventional and sequential zones
# with resets mixed in, memory-backed and not; in configfs, hostile zoned
# settings are refused or adjusted with null_blk's messages, and
# zone_offline / zone_readonly take a sector of a powered zoned device
# only.
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

# zone_cond ZONE_SECTOR: the condition blkzone reports for one zone.
zone_cond() {
	blkzone report -o "$1" -c 1 $dev | sed -n 's/.*zcond: *\([0-9a-f]*([a-z]*)\).*/\1/p'
}

# zbd_fio ARGS...: fio over the device in zonemode=zbd; fails the test on
# an error.
zbd_fio() {
	out=$(fio_terse --name=zbd --filename=$dev --direct=1 --ioengine=psync \
		--zonemode=zbd --max_open_zones=4 --bs=4k "$@") || fail "fio $*: $out"
	expect_eq "$(echo "$out" | tail -n 1 | terse_field 6)" 0 "fio $* error"
}

for mb in 1 0; do
	load_rnull zoned=1 gb=1 zone_size=64 zone_nr_conv=2 zone_max_open=4 zone_max_active=6 memory_backed=$mb
	dev=/dev/rnullb0
	if command -v blkzone >/dev/null; then
		z=$((3 * 131072))
		blkzone open -o $z -c 1 $dev || fail "blkzone open"
		expect_eq "$(zone_cond $z)" "3(ex)" "zone 3 after open"
		blkzone close -o $z -c 1 $dev || fail "blkzone close"
		# An open zone with nothing written closes to empty (ZBC).
		expect_eq "$(zone_cond $z)" "1(em)" "zone 3 after close"
		sector-io write $dev $z 8 /tmp/zdata || fail "write to zone 3"
		expect_eq "$(zone_cond $z)" "2(oi)" "zone 3 after a write"
		blkzone close -o $z -c 1 $dev || fail "blkzone close of a written zone"
		expect_eq "$(zone_cond $z)" "4(cl)" "zone 3 closed"
		blkzone finish -o $z -c 1 $dev || fail "blkzone finish"
		expect_eq "$(zone_cond $z)" "e(fu)" "zone 3 finished"
		sector-io write $dev $((z + 8)) 8 /tmp/zdata
		expect_eq "$?" 3 "write to a full zone: EIO"
		blkzone reset $dev || fail "blkzone reset of all zones"
		expect_eq "$(zone_cond $z)" "1(em)" "zone 3 after reset all"
		expect_eq "$(blkzone report $dev | grep -c '1(em)')" 14 "empty zones after reset all"
		log "ok: memory_backed=$mb: open, close, finish, reset (all) as ZBC"
	fi
	if command -v fio >/dev/null; then
		if [ $mb = 1 ]; then
			# Sequential writes then a verify of every zone, both kinds.
			zbd_fio --rw=write --size=512M --verify=crc32c --do_verify=1
			# Random writes at the write pointers, zones reset when 40% of
			# the device is written, each write verified as it completes.
			zbd_fio --rw=randwrite --size=1G --io_size=1536M \
				--zone_reset_threshold=0.4 --zone_reset_frequency=0.05 \
				--verify=crc32c --verify_backlog=64 --numjobs=1
			log "ok: fio zonemode=zbd write/randwrite with resets verified (crc32c)"
		else
			zbd_fio --rw=randwrite --size=1G --io_size=768M --zone_reset_threshold=0.4 \
				--zone_reset_frequency=0.05
			log "ok: fio zonemode=zbd randwrite with resets without memory backing"
		fi
	else
		log "fio is missing: zonemode=zbd not tried"
	fi
	unload_rnull
done

# configfs: the zoned attributes, null_blk's rules at power on.
cfs=/sys/kernel/config/rnull
load_rnull nr_devices=0
features=$(cat $cfs/features)
for a in zoned zone_size zone_capacity zone_nr_conv zone_max_open zone_max_active \
	zone_append_max_sectors zone_full zone_offline zone_readonly; do
	echo ",$features," | grep -q ",$a," || fail "features does not list $a"
done
d=$cfs/z
mkdir $d || fail "mkdir $d"
echo 1024 >$d/size && echo 1 >$d/memory_backed || fail "size, memory_backed"

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

# power_refused WHY ATTR=VALUE...: power on fails naming WHY, nothing is
# made; the attributes go back to the good geometry afterwards.
power_refused() {
	why=$1
	shift
	for av in "$@"; do echo "${av#*=}" >$d/${av%%=*} || fail "set $av"; done
	kmsg_mark
	if echo 1 >$d/power 2>/dev/null; then fail "power on with $* accepted"; fi
	kmsg_since | grep -qF "$why" || fail "$*: no log line with '$why'"
	expect_eq "$(cat $d/power)" 0 "power after $*"
	[ ! -e /sys/block/rnullb0 ] || fail "a disk was made with $*"
	echo 64 >$d/zone_size && echo 0 >$d/zone_capacity || fail "reset the geometry"
	log "ok: power on with $* refused: $why"
}
power_refused "zone_size must be non-zero power-of-two" zone_size=48
power_refused "zone capacity (128 MB) larger than zone size (64 MB)" zone_capacity=128
power_refused "larger than device capacity" zone_size=2048
power_refused "A smaller last zone is not allowed" size=1000 zone_capacity=32
echo 1024 >$d/size || fail "size back"

# Limits above the zone count and more conventional zones than zones:
# adjusted at power on with null_blk's messages, shown adjusted.
echo 100 >$d/zone_nr_conv && echo 100 >$d/zone_max_active && echo 100 >$d/zone_max_open ||
	fail "zone limits"
kmsg_mark
echo 1 >$d/power || fail "power on with adjusted limits"
for m in "changed the number of conventional zones to 15" \
	"zone_max_active limit disabled, limit >= zone count" \
	"zone_max_open limit disabled, limit >= zone count"; do
	kmsg_since | grep -qF "$m" || fail "no '$m'"
done
expect_eq "$(cat $d/zone_nr_conv)" 15 "zone_nr_conv shown adjusted"
expect_eq "$(cat $d/zone_max_open)" 0 "zone_max_open shown adjusted"
expect_eq "$(cat $d/zone_capacity)" 64 "zone_capacity shown adjusted"
expect_eq "$(cat /sys/block/rnullb0/queue/nr_zones)" 16 "configfs device's zones"
if echo 32 >$d/zone_size 2>/dev/null; then fail "zone_size changed while powered on"; fi
echo 0 >$d/power || fail "power off"
echo 2 >$d/zone_nr_conv && echo 0 >$d/zone_max_active && echo 0 >$d/zone_max_open || fail "limits back"
echo 1 >$d/power || fail "power on"

dev=/dev/rnullb0
z2=$((2 * 131072)) z3=$((3 * 131072))
cond_refused zone_offline $((16 * 131072)) "Sector out of range"
cond_refused zone_readonly 0 "Can not change condition of conventional zones"
cond_refused zone_offline -1 "must be a sector"
sector-io write $dev $z2 8 /tmp/zdata || fail "write to zone 2"
sector-io write $dev $z3 8 /tmp/zdata || fail "write to zone 3"
echo $z2 >$d/zone_offline || fail "zone_offline $z2"
echo $((z3 + 5)) >$d/zone_readonly || fail "zone_readonly in zone 3"
sector-io read $dev $z2 8 /tmp/zback
expect_eq "$?" 3 "read of an offline zone: EIO"
sector-io read $dev $z3 8 /tmp/zback || fail "read of a read-only zone"
cmp -s /tmp/zdata /tmp/zback || fail "the read-only zone lost its data"
sector-io write $dev $((z3 + 8)) 8 /tmp/zdata
expect_eq "$?" 3 "write to a read-only zone: EIO"
if command -v blkzone >/dev/null; then
	expect_eq "$(zone_cond $z2)" "f(of)" "zone 2 offline in the report"
	expect_eq "$(zone_cond $z3)" "d(ro)" "zone 3 read-only in the report"
fi
# The same condition again gives the zone back, empty (null_blk's).
echo $z2 >$d/zone_offline || fail "zone_offline $z2 again"
sector-io write $dev $z2 8 /tmp/zdata || fail "write to zone 2 back from offline"
log "ok: zone_offline / zone_readonly through configfs"
rmdir $d || fail "rmdir"
unload_rnull
