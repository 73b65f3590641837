#!/bin/sh
# fio --zonemode=zbd on a zoned rnull of conventional and sequential zones,
# one job per CPU (each on its own zones) and one hardware queue per CPU:
# on a memory-backed device sequential passes and random writes at the
# write pointers, after zone resets and with zone resets while they run,
# every block verified (crc32c; fio 3.33 verifies no run that resets zones
# as it goes, so a verified pass follows that one); without memory
# backing, where no data is kept to verify, the writes and resets must
# complete without an error (fio checks each zone's write pointer against
# the device's report). Run it at 1 and at 4 vCPUs (CPUS=4). fio 3.33 issues
# no zone append to a block device; btrfs does (selftest 105).
. "$(dirname "$0")/lib.sh"
command -v fio >/dev/null || skip "fio is missing"

require_zoned

cpus=$(nproc)
# 1 GiB of 16 MiB zones, the first 4 conventional; the first 256 MiB are
# split between the jobs, on zone boundaries (conventional zones in the
# first job's share). The block layer has one write in flight per zone,
# so large blocks keep the run short under TCG.
per=$((256 / cpus / 16 * 16))
dev=/dev/rnullb0

# zbd_fio ARGS...: fio over the device in zonemode=zbd, one job per CPU
# on its own $per MiB; fails the test on an error. Sets read_kib to what
# it read (verifying).
zbd_fio() {
	out=$(fio_terse --name=zbd --filename=$dev --direct=1 --ioengine=libaio --iodepth=8 \
		--zonemode=zbd --max_open_zones=8 --numjobs="$cpus" --size=${per}M \
		--offset_increment=${per}M --group_reporting "$@") || fail "fio $*: $out"
	expect_eq "$(echo "$out" | tail -n 1 | terse_field 5)" 0 "fio $* error"
	read_kib=$(echo "$out" | tail -n 1 | terse_field 6)
}

for mb in 1 0; do
	load_rnull zoned=1 gb=1 zone_size=16 zone_nr_conv=4 zone_max_open=8 memory_backed=$mb \
		submit_queues="$cpus" poll_queues=0
	expect_eq "$(ls /sys/block/rnullb0/mq | wc -l)" "$cpus" "hardware queues"
	if [ $mb = 1 ]; then
		# Every zone of each share written in order, then read back
		# (fio resets a share's zones before it writes with verify).
		zbd_fio --rw=write --bs=64k --verify=crc32c --do_verify=1
		expect_eq "$read_kib" $((per * cpus * 1024)) "KiB read back and verified"
		# Random writes at the write pointers of the zones just filled:
		# fio resets them first (a reset of every zone holding data), then
		# verifies each write 64 writes later and the rest at the end.
		zbd_fio --rw=randwrite --bsrange=4k-64k --verify=crc32c --verify_backlog=64
		[ "$read_kib" -gt 0 ] || fail "randwrite verified nothing"
		log "randwrite after the resets: $read_kib KiB verified"
		# Random writes with zone resets while they run (twice the
		# share, a zone reset once 40% of it holds data; fio verifies
		# nothing here, as a reset in its run would lose what it checks),
		# then a verified sequential pass over the same zones.
		zbd_fio --rw=randwrite --bsrange=4k-64k --io_size=$((2 * per))M --zone_reset_threshold=0.4 \
			--zone_reset_frequency=0.05
		zbd_fio --rw=write --bs=64k --verify=crc32c --do_verify=1
		expect_eq "$read_kib" $((per * cpus * 1024)) "KiB verified after the resets"
		log "ok: $cpus CPUs, memory-backed: zonemode=zbd write and randwrite with resets verified"
	else
		zbd_fio --rw=write --bs=64k
		zbd_fio --rw=randwrite --bsrange=4k-64k --io_size=$((2 * per))M --zone_reset_threshold=0.4 \
			--zone_reset_frequency=0.05
		log "ok: $cpus CPUs, no memory backing: zonemode=zbd write and randwrite with resets"
	fi
	unload_rnull
done
