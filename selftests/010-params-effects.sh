#!/bin/sh
# Every parameter's effect is visible where a user looks for it: the queue
# attributes of the block layer and /sys/block/rnullbN/rnull/.
. "$(dirname "$0")/lib.sh"

load_rnull
expect_eq "$(cat /sys/module/rnull/parameters/hw_queue_depth)" 64 "default hw_queue_depth"
expect_eq "$(cat /sys/block/rnullb0/queue/logical_block_size)" 512 "default bs"
expect_eq "$(cat /sys/block/rnullb0/size)" $((250 << 21)) "default size (250 GiB)"
expect_eq "$(dev_attr 0 irqmode)" "1 (softirq)" "default irqmode"
unload_rnull

load_rnull bs=4096 hw_queue_depth=32 gb=2 rotational=1 irqmode=2 \
	completion_nsec=20000 memory_backed=1 discard=1 cache_size=4 blocking=1 max_sectors=128
q=/sys/block/rnullb0/queue
expect_eq "$(cat $q/logical_block_size)" 4096 "queue/logical_block_size"
expect_eq "$(cat $q/physical_block_size)" 4096 "queue/physical_block_size"
expect_eq "$(cat $q/nr_requests)" 32 "queue/nr_requests"
expect_eq "$(cat $q/rotational)" 1 "queue/rotational"
expect_eq "$(cat $q/max_hw_sectors_kb)" 64 "queue/max_hw_sectors_kb"
expect_eq "$(cat /sys/block/rnullb0/size)" $((2 << 21)) "size in sectors"
expect_eq "$(dev_attr 0 irqmode)" "2 (timer)" "rnull/irqmode"
expect_eq "$(dev_attr 0 completion_nsec)" 20000 "rnull/completion_nsec"
# completion_nsec is the one writable device file (per device, for block/035).
echo 30000 >/sys/block/rnullb0/rnull/completion_nsec || fail "completion_nsec refused 30000"
expect_eq "$(dev_attr 0 completion_nsec)" 30000 "rnull/completion_nsec after write"
for bad in -1 9223372036854775808 x ""; do
	if echo "$bad" >/sys/block/rnullb0/rnull/completion_nsec 2>/dev/null; then
		fail "completion_nsec accepted '$bad'"
	fi
done
expect_eq "$(dev_attr 0 completion_nsec)" 30000 "rnull/completion_nsec after bad writes"
if echo 1 >/sys/block/rnullb0/rnull/bs 2>/dev/null; then fail "read-only bs accepted a write"; fi
expect_eq "$(dev_attr 0 memory_backed)" 1 "rnull/memory_backed"
expect_eq "$(dev_attr 0 blocking)" 1 "rnull/blocking"
expect_eq "$(cat $q/write_cache)" "write back" "memory-backed write cache (cache_size=4)"
expect_eq "$(dev_attr 0 cache_size)" 4 "rnull/cache_size"
[ "$(cat $q/discard_max_hw_bytes)" -gt 0 ] || fail "memory-backed device without discard"
unload_rnull

load_rnull nr_devices=3 shared_tags=1
for i in 0 1 2; do
	[ -b "/dev/rnullb$i" ] || fail "rnullb$i missing with nr_devices=3"
	expect_eq "$(dev_attr "$i" index)" "$i" "rnullb$i/rnull/index"
	expect_eq "$(dev_attr "$i" shared_tags)" 1 "rnullb$i/rnull/shared_tags"
done
[ ! -e /dev/rnullb3 ] || fail "rnullb3 exists with nr_devices=3"
unload_rnull

cpus=$(nproc)
load_rnull submit_queues="$cpus" poll_queues=0
expect_eq "$(ls -d /sys/block/rnullb0/mq/* | wc -l)" "$cpus" "mq directories with submit_queues=$cpus"
expect_eq "$(dev_attr 0 submit_queues)" "$cpus" "rnull/submit_queues"
unload_rnull

# More queues than CPUs is clamped, as null_blk does, with a warning.
kmsg_mark
load_rnull submit_queues=$((cpus + 3)) poll_queues=0
expect_eq "$(ls -d /sys/block/rnullb0/mq/* | wc -l)" "$cpus" "mq directories with submit_queues>CPUs"
kmsg_since | grep -q "submit_queues=$((cpus + 3)) is more than" || fail "no clamp warning"
unload_rnull
