#!/bin/sh
# The rotational model completes no request before its modelled service
# time, stretched by model_time_dilation: with every seek 1 ms and no
# rotational latency, random reads take at least 1 ms at dilation 1 and at
# least 3 ms at dilation 3 (timers never fire early, so this lower bound
# holds however slow the guest is).
. "$(dirname "$0")/lib.sh"

for k in 1 3; do
	load_rnull rotational_model=1 gb=1 seek_min_us=1000 seek_max_us=1000 rpm=0 \
		model_time_dilation="$k"
	expect_eq "$(cat /sys/module/rnull/parameters/model_time_dilation)" "$k" \
		"model_time_dilation parameter"
	out=$(fio_terse --name=lat --filename=/dev/rnullb0 --direct=1 --rw=randread \
		--bs=4k --ioengine=libaio --iodepth=1 --number_ios=20 --randrepeat=0) ||
		fail "fio failed at dilation $k"
	ios=$(echo "$out" | terse_field 6)
	[ "$ios" -gt 0 ] || fail "no I/O completed at dilation $k"
	# Terse v3 field 38: minimum total read latency in usec.
	min_us=$(echo "$out" | terse_field 38)
	log "model_time_dilation=$k: $ios random reads, min latency ${min_us}us"
	[ "$min_us" -ge $((k * 1000)) ] ||
		fail "a seek completed after ${min_us}us < ${k}ms at dilation $k"
	unload_rnull
done
