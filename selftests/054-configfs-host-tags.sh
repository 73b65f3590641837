#!/bin/sh
# rnull's own configfs attributes on the tag side: host_tags puts a
# configfs device in the load-time host budget (its share shows in
# rnull/tags_*) or keeps it out; shared_tags=1 puts it on the module-wide
# tag set of the load-time devices, which needs the same queue shape.
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/rnull
# poll_queues=0: with a second hardware queue blk-mq completes irqmode=1
# requests inline in queue_rq (blk_mq_complete_request_remote raises the
# softirq only for a single-queue device), so fewer than the budget would
# ever be in flight.
load_rnull nr_devices=1 host_queue_depth=8 shared_tags=1 poll_queues=0
mkdir $cfs/in $cfs/out $cfs/shape || fail "mkdir"
expect_eq "$(cat $cfs/in/host_tags)" 1 "host_tags default with a budget"
expect_eq "$(cat $cfs/in/shared_tags)" 1 "shared_tags default (the parameter's)"
echo 1 >$cfs/in/power || fail "in: power=1"
echo 0 >$cfs/out/host_tags || fail "out: host_tags=0"
echo 0 >$cfs/out/shared_tags || fail "out: shared_tags=0"
echo 1 >$cfs/out/power || fail "out: power=1"
[ -e /sys/block/rnullb1/rnull/tags_limit ] || fail "host_tags=1 device without tags_limit"
[ ! -e /sys/block/rnullb2/rnull/tags_limit ] || fail "host_tags=0 device with tags_limit"
expect_eq "$(dev_attr 1 shared_tags)" 1 "rnullb1/rnull/shared_tags"
expect_eq "$(dev_attr 2 shared_tags)" 0 "rnullb2/rnull/shared_tags"

# The shared tag set is one: blk-mq marks its queues' contexts shared.
dbg=/sys/kernel/debug/block
if [ -r $dbg/rnullb1/hctx0/flags ]; then
	grep -q TAG_QUEUE_SHARED $dbg/rnullb1/hctx0/flags || fail "rnullb1 not on a shared tag set: $(cat $dbg/rnullb1/hctx0/flags)"
	grep -q TAG_QUEUE_SHARED $dbg/rnullb0/hctx0/flags || fail "rnullb0 not on a shared tag set"
	! grep -q TAG_QUEUE_SHARED $dbg/rnullb2/hctx0/flags || fail "rnullb2 on a shared tag set"
	log "hctx flags: rnullb1 $(cat $dbg/rnullb1/hctx0/flags)"
fi

# Under I/O only the budget's devices draw from it: rnullb1 (iodepth 16
# against a budget of 8) is refused tags, rnullb2 never asks.
fio_terse --name=in --filename=/dev/rnullb1 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=16 --time_based --runtime=2 >/dev/null &
fio_terse --name=out --filename=/dev/rnullb2 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=16 --time_based --runtime=2 >/dev/null &
wait
ios=$(awk '{print $1}' /sys/block/rnullb2/stat)
[ "$ios" -gt 0 ] || fail "no I/O on rnullb2"
failures=$(dev_attr 1 tags_failures)
[ "$failures" -gt 0 ] || fail "rnullb1 (host_tags=1) never refused a tag with iodepth 16 > budget 8"
log "rnullb1 refused $failures times by the budget; rnullb2 read $ios times outside it"

# The module-wide tag set has the module parameters' shape.
echo 16 >$cfs/shape/hw_queue_depth || fail "shape: hw_queue_depth=16"
kmsg_mark
if echo 1 >$cfs/shape/power 2>/tmp/err; then fail "shared_tags with another depth accepted"; fi
grep -q "Invalid argument" /tmp/err || fail "shape: not EINVAL: $(cat /tmp/err)"
kmsg_since | grep -q "module-wide tag set" || fail "shape: no log line"
echo 64 >$cfs/shape/hw_queue_depth && echo 1 >$cfs/shape/power || fail "shape: power=1 with the module's depth"
rmdir $cfs/in $cfs/out $cfs/shape || fail "rmdir"
unload_rnull
