#!/bin/sh
# The rotational model: it reports a rotational disk with one hardware
# queue, keeps data intact through its dispatcher and the drive's command
# queue (fio verify with several jobs, with and without time slices, slices
# changed while I/O runs), and drains completely on unload.
. "$(dirname "$0")/lib.sh"

kmsg_mark
load_rnull rotational_model=1 submit_queues=2 memory_backed=1 gb=1 seek_max_us=2000
expect_eq "$(cat /sys/block/rnullb0/queue/rotational)" 1 "queue/rotational"
expect_eq "$(ls -d /sys/block/rnullb0/mq/* | wc -l)" 1 "hardware queues of the model"
kmsg_since | grep -q "rotational_model has one actuator" || fail "no submit_queues warning"

f=/sys/block/rnullb0/mq/0/time_slice_us
verify_with_slices() {
	for ts in 0 500; do
		echo "$ts" >"$f"
		out=$(fio_terse --name=v --filename=/dev/rnullb0 --direct=1 --ioengine=libaio \
			--rw=write --bs=4k --iodepth=1 --numjobs=2 --offset_increment=64m --size=2m \
			--verify=crc32c --do_verify=1 --group_reporting) ||
			fail "fio verify failed with time_slice_us=$ts"
		expect_eq "$(echo "$out" | terse_field 5)" 0 "verify error status with time_slice_us=$ts"
	done
}
verify_with_slices

# Change the slice continuously under a multi-job sequential read.
fio --name=r --filename=/dev/rnullb0 --direct=1 --ioengine=libaio --rw=read --bs=4k \
	--iodepth=1 --numjobs=2 --offset_increment=64m --size=8m --time_based --runtime=2 \
	>/tmp/fio.out 2>&1 &
pid=$!
for ts in 100 0 2000 50 0 1000 0; do
	echo "$ts" >"$f" || fail "writing $ts during I/O failed"
	sleep 0.2
done
wait $pid || fail "fio failed while time_slice_us changed: $(cat /tmp/fio.out)"
unload_rnull

# Herrmann's slice clock (from selection), on a drive that serves one
# command at a time with a small cache.
load_rnull rotational_model=1 memory_backed=1 gb=1 seek_max_us=2000 \
	time_slice_start=selection ncq_depth=1 cache_segments=2 segment_kib=64 \
	readahead_min_kib=32
expect_eq "$(cat /sys/module/rnull/parameters/time_slice_start)" selection "time_slice_start"
verify_with_slices
unload_rnull
