#!/bin/sh
# The bandwidth limit: a request completes no earlier than its bytes can
# cross the device's link (mbps) and the host's (host_mbps), behind the
# bytes queued ahead of it. Timers never fire early, so these lower bounds
# hold however slow the guest is. Also: the rate files and parameters
# refuse bad input and change nothing.
. "$(dirname "$0")/lib.sh"
trap cleanup_rnull EXIT

# 128 KiB at 4 MiB/s: 31.25 ms.
one_ms=31

load_rnull mbps=4
expect_eq "$(cat /sys/block/rnullb0/rnull/mbps)" 4 "rnull/mbps from the parameter"
out=$(fio_terse --name=bw --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=128k \
	--ioengine=libaio --iodepth=1 --number_ios=4) || fail "fio failed"
# Terse v3 field 38/39: minimum/maximum total read latency in usec.
min_us=$(echo "$out" | terse_field 38)
log "mbps=4, 128k at iodepth 1: min latency ${min_us}us"
[ "$min_us" -ge $((one_ms * 1000)) ] || fail "a 128k read took ${min_us}us < ${one_ms}ms at 4 MiB/s"

# Four submitted at once: the last waits behind the other three.
out=$(fio_terse --name=bw --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=128k \
	--ioengine=libaio --iodepth=4 --iodepth_batch_submit=4 --number_ios=8) || fail "fio failed"
max_us=$(echo "$out" | terse_field 39)
log "mbps=4, 128k at iodepth 4: max latency ${max_us}us"
[ "$max_us" -ge $((4 * one_ms * 1000)) ] ||
	fail "with 4 queued the slowest read took ${max_us}us < $((4 * one_ms))ms"

# Off again: 0 lifts the limit.
echo 0 >/sys/block/rnullb0/rnull/mbps || fail "could not clear rnull/mbps"
unload_rnull

# host_mbps belongs to the host budget.
if insmod "$RNULL_KO" host_mbps=4 2>/dev/null; then
	fail "host_mbps loaded without host_queue_depth"
fi
dmesg | tail -n 5 | grep -q "host_mbps=4 needs host_queue_depth" ||
	fail "no log line naming host_mbps and host_queue_depth"

# Two devices share the host's 4 MiB/s: 2 x 8 x 128 KiB take >= 500 ms.
load_rnull nr_devices=2 host_queue_depth=64 host_mbps=4
expect_eq "$(cat /sys/module/rnull/host/mbps)" 4 "host/mbps from the parameter"
out=$(fio_terse --name=a --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=128k \
	--ioengine=libaio --iodepth=1 --number_ios=8 \
	--name=b --filename=/dev/rnullb1 --direct=1 --rw=randread --bs=128k \
	--ioengine=libaio --iodepth=1 --number_ios=8) || fail "fio failed"
# Terse v3 field 9: read runtime in msec, one line per job. The link is
# busy 500 ms inside the union of the two jobs' runs, which is no longer
# than the sum of their runtimes (whatever their start skew).
sum=$(echo "$out" | terse_field 9 | awk '{s += $1} END {print s}')
log "host_mbps=4, two devices, 2 MiB in all: job runtimes sum to ${sum}ms"
[ "$sum" -ge 500 ] || fail "2 MiB crossed a 4 MiB/s host link in ${sum}ms of job time"
