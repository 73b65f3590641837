#!/bin/sh
# fio (io_uring, 4k random reads, one job per CPU) completes I/O on rnullb0
# in every completion mode, without errors.
. "$(dirname "$0")/lib.sh"

for mode in 0 1 2; do
	load_rnull irqmode="$mode" submit_queues="$(nproc)"
	out=$(fio_terse --name=smoke --filename=/dev/rnullb0 --direct=1 --rw=randread \
		--bs=4k --ioengine=io_uring --iodepth=16 --numjobs="$(nproc)" \
		--group_reporting --time_based --runtime=1) || fail "fio failed in irqmode=$mode"
	err=$(echo "$out" | terse_field 5)
	ios=$(echo "$out" | terse_field 6)
	iops=$(echo "$out" | terse_field 8)
	expect_eq "$err" 0 "fio error in irqmode=$mode"
	[ "$ios" -gt 0 ] || fail "no data read in irqmode=$mode"
	log "irqmode=$mode: $iops IOPS"
	unload_rnull
done
