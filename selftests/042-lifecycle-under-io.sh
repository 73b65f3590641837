#!/bin/sh
# Lifecycle under load: rmmod while fio runs is refused and I/O goes on;
# every tunable is switched continuously while fio verifies data on two
# memory-backed devices sharing the host budget: no error, no mismatch.
. "$(dirname "$0")/lib.sh"

load_rnull nr_devices=2 memory_backed=1 gb=1 host_queue_depth=16 irqmode=1 \
	submit_queues="$(nproc)"
# Options before the first --name apply to both jobs.
fio --direct=1 --ioengine=io_uring --iodepth=8 --rw=randwrite --bsrange=4k-64k \
	--size=48m --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=json \
	--name=v0 --filename=/dev/rnullb0 --name=v1 --filename=/dev/rnullb1 \
	>/tmp/storm.json 2>/tmp/storm.err &
pid=$!
wait_writes rnullb0
if rmmod rnull 2>/dev/null; then
	fail "rmmod succeeded while fio ran"
fi
h=/sys/module/rnull/host
# Every registered policy, as host/policy lists them.
policies=$(tr -d '[]' <$h/policy)
[ -n "$policies" ] || fail "$h/policy lists no policy"
i=0
while kill -0 $pid 2>/dev/null; do
	for p in $policies; do echo $p >$h/policy; done
	echo $((1 + i % 32)) >$h/depth
	echo $((i % 3)) >$h/borrow_expiry_us
	echo $((1 + i % 200)) >$h/idle_ms
	echo $((i % 500)) >/sys/block/rnullb0/mq/0/time_slice_us
	echo $((i * 1000 % 50000)) >/sys/block/rnullb1/rnull/completion_nsec
	i=$((i + 1))
done
wait $pid || fail "fio failed under the tunable storm: $(head -c 500 /tmp/storm.err)"
errs=$(sed -n 's/.*"total_err" : \([0-9]*\).*/\1/p' /tmp/storm.json | awk '{s+=$1} END {print s+0}')
written=$(sed -n 's/.*"io_bytes" : \([0-9]*\).*/\1/p' /tmp/storm.json | awk '{s+=$1} END {print s+0}')
expect_eq "$errs" 0 "fio errors under the storm"
log "$i tunable rounds; $written bytes moved (writes plus their verify reads), 0 errors, 0 mismatches"
unload_rnull

# 100 load/unload cycles.
i=0
while [ $i -lt 100 ]; do
	load_rnull nr_devices=2 host_queue_depth=$((1 + i % 8)) rotational_model=$((i % 2))
	unload_rnull
	i=$((i + 1))
done
log "100 load/unload cycles"
