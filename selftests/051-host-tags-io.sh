#!/bin/sh
# Two devices share a tiny host budget. Under every policy both make
# progress (no lost wake-up: a stuck queue would leave its fio job without
# completions), the budget is never exceeded, policies and depth can be
# switched while I/O runs, and everything drains back to zero.
. "$(dirname "$0")/lib.sh"

h=/sys/module/rnull/host
load_rnull nr_devices=2 host_queue_depth=4 irqmode=2 completion_nsec=200000 \
	submit_queues="$(nproc)"
# Every registered policy, as host/policy lists them.
policies=$(tr -d '[]' <$h/policy)
[ -n "$policies" ] || fail "host/policy lists no policy"

for p in $policies; do
	echo "$p" >$h/policy || fail "cannot set policy $p"
	fio_terse --name=a --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
		--ioengine=io_uring --iodepth=16 --time_based --runtime=2 \
		--name=b --filename=/dev/rnullb1 --direct=1 --rw=randread --bs=4k \
		--ioengine=io_uring --iodepth=16 --time_based --runtime=2 >/tmp/fio.out &
	pid=$!
	max=0
	i=0
	while [ $i -lt 10 ]; do
		used=$(cat $h/in_use)
		[ "$used" -gt "$max" ] && max=$used
		i=$((i + 1))
		sleep 0.1
	done
	wait $pid || fail "fio failed under $p"
	[ "$max" -le 4 ] || fail "in_use reached $max with depth 4 under $p"
	a=$(sed -n 1p /tmp/fio.out | terse_field 6)
	b=$(sed -n 2p /tmp/fio.out | terse_field 6)
	log "$p: rnullb0 ${a} KiB, rnullb1 ${b} KiB, max in_use $max, failures $(cat /sys/block/rnullb0/rnull/tags_failures)/$(cat /sys/block/rnullb1/rnull/tags_failures)"
	[ "$a" -gt 0 ] && [ "$b" -gt 0 ] || fail "a device made no progress under $p"
done

# Switch everything while fio runs.
fio --name=storm --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=16 --time_based --runtime=3 \
	--name=storm1 --filename=/dev/rnullb1 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=16 --time_based --runtime=3 >/dev/null &
pid=$!
i=0
while [ $i -lt 30 ]; do
	for p in $policies; do echo $p >$h/policy; done
	echo $((1 + i % 8)) >$h/depth
	i=$((i + 1))
done
wait $pid || fail "fio failed while tunables changed"
echo 4 >$h/depth
sleep 0.3
expect_eq "$(cat $h/in_use)" 0 "in_use after I/O"
expect_eq "$(cat /sys/block/rnullb0/rnull/tags_in_flight)" 0 "rnullb0 in flight after I/O"
expect_eq "$(cat /sys/block/rnullb1/rnull/tags_in_flight)" 0 "rnullb1 in flight after I/O"
unload_rnull
