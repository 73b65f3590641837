#!/bin/sh
# The bandwidth limit: a request completes no earlier than its bytes can
# cross the device's link (mbps) and the host's (host_mbps), behind the
# bytes queued ahead of it. Timers never fire early, so these lower bounds
# hold however slow the guest is. Also: the rate files and parameters
# refuse bad input and change nothing.
. "$(dirname "$0")/lib.sh"
trap cleanup_rnull EXIT

# One 128 KiB transfer at 4 MiB/s: 31.25 ms.
xfer_ms=31

load_rnull mbps=4
expect_eq "$(cat /sys/block/rnullb0/rnull/mbps)" 4 "rnull/mbps from the parameter"
out=$(fio_terse --name=bw --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=128k \
	--ioengine=libaio --iodepth=1 --number_ios=4) || fail "fio failed"
# Terse v3 field 38/39: minimum/maximum total read latency in usec.
min_us=$(echo "$out" | terse_field 38)
log "mbps=4, 128k at iodepth 1: min latency ${min_us}us"
[ "$min_us" -ge $((xfer_ms * 1000)) ] || fail "a 128k read took ${min_us}us < ${xfer_ms}ms at 4 MiB/s"

# Four submitted at once: the last waits behind the other three.
out=$(fio_terse --name=bw --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=128k \
	--ioengine=libaio --iodepth=4 --iodepth_batch_submit=4 --number_ios=8) || fail "fio failed"
max_us=$(echo "$out" | terse_field 39)
log "mbps=4, 128k at iodepth 4: max latency ${max_us}us"
[ "$max_us" -ge $((4 * xfer_ms * 1000)) ] ||
	fail "with 4 queued the slowest read took ${max_us}us < $((4 * xfer_ms))ms"

# Off and on again: the backlog left at the old rate is forgotten. Queue
# 8 MiB at 1 MiB/s (8 s), lift the limit, set 1024 MiB/s: a 128 KiB read
# must not wait behind the old backlog. (An upper bound, but a loose one: the
# old backlog is about 7 s when the read comes, the check allows 4.)
echo 1 >/sys/block/rnullb0/rnull/mbps || fail "could not set rnull/mbps"
fio_terse --name=fill --filename=/dev/rnullb0 --direct=1 --rw=read --bs=1m \
	--ioengine=libaio --iodepth=8 --iodepth_batch_submit=8 --number_ios=8 \
	>/dev/null 2>&1 &
sleep 1
echo 0 >/sys/block/rnullb0/rnull/mbps || fail "could not clear rnull/mbps"
echo 1024 >/sys/block/rnullb0/rnull/mbps || fail "could not set rnull/mbps"
out=$(fio_terse --name=after --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=128k \
	--ioengine=libaio --iodepth=1 --number_ios=1) || fail "fio failed"
max_us=$(echo "$out" | terse_field 39)
log "after 0 then 1024 MiB/s behind an 8 s backlog: ${max_us}us"
[ "$max_us" -lt 4000000 ] || fail "a read waited ${max_us}us behind the backlog of the old rate"
echo 0 >/sys/block/rnullb0/rnull/mbps || fail "could not clear rnull/mbps"
wait
unload_rnull

# host_mbps belongs to the host budget.
if insmod "$RNULL_KO" host_mbps=4 2>/dev/null; then
	fail "host_mbps loaded without host_queue_depth"
fi
dmesg | tail -n 5 | grep -q "host_mbps=4 needs host_queue_depth" ||
	fail "no log line naming host_mbps and host_queue_depth"

# Two devices share the host's 4 MiB/s: one job alternating between them
# with one request on each moves 16 x 128 KiB = 2 MiB in >= 500 ms. With a
# link per device it would take about half that.
load_rnull nr_devices=2 host_queue_depth=64 host_mbps=4
expect_eq "$(cat /sys/module/rnull/host/mbps)" 4 "host/mbps from the parameter"
out=$(fio_terse --name=both --filename=/dev/rnullb0:/dev/rnullb1 --file_service_type=roundrobin \
	--direct=1 --rw=randread --bs=128k --ioengine=libaio --iodepth=2 --number_ios=16) ||
	fail "fio failed"
# Terse v3 field 9: read runtime in msec.
ms=$(echo "$out" | terse_field 9)
log "host_mbps=4, two devices, 2 MiB: ${ms}ms"
[ "$ms" -ge 480 ] || fail "2 MiB crossed a shared 4 MiB/s host link in ${ms}ms"
