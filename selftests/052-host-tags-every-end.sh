#!/bin/sh
# Every way a request leaves the driver gives its host tag back: completed
# inline, in a batch, from the softirq or the timer, requeued, or lost and
# ended by blk-mq's timeout. After I/O with fault injection on, nothing is
# held and no queue waits.
. "$(dirname "$0")/lib.sh"
trap cleanup_rnull EXIT

h=/sys/module/rnull/host
for irq in 0 1 2; do
	load_rnull nr_devices=2 host_queue_depth=8 irqmode="$irq" completion_nsec=100000 \
		inject_timeout_percent=5 inject_requeue_percent=20 rq_timeout_ms=200 \
		submit_queues="$(nproc)"
	# Batched dispatch (queue_rqs) needs several requests per plug.
	fio_terse --name=a --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
		--ioengine=io_uring --iodepth=16 --iodepth_batch_submit=8 \
		--iodepth_batch_complete_min=1 --time_based --runtime=2 \
		--name=b --filename=/dev/rnullb1 --direct=1 --rw=randread --bs=4k \
		--ioengine=libaio --iodepth=4 --time_based --runtime=2 >/tmp/fio.out 2>&1
	t=$(cat /sys/block/rnullb0/rnull/injected_timeouts)
	r=$(cat /sys/block/rnullb0/rnull/injected_requeues)
	[ "$t" -gt 0 ] || fail "irqmode $irq: no request was lost (injection off?)"
	[ "$r" -gt 0 ] || fail "irqmode $irq: no request was requeued (injection off?)"
	used=$(cat $h/in_use)
	[ "$used" = 0 ] || fail "irqmode $irq: $used host tags still held after $t timeouts, $r requeues"
	for d in 0 1; do
		f=$(cat /sys/block/rnullb$d/rnull/tags_in_flight)
		[ "$f" = 0 ] || fail "irqmode $irq: rnullb$d holds $f tags"
	done
	log "irqmode $irq: $t lost and $r requeued requests, every host tag returned"
	unload_rnull
done
