#!/bin/sh
# In timer mode every completion takes at least completion_nsec.
. "$(dirname "$0")/lib.sh"

for nsec in 250000 1000000; do
	load_rnull irqmode=2 completion_nsec="$nsec"
	out=$(fio_terse --name=lat --filename=/dev/rnullb0 --direct=1 --rw=randread \
		--bs=4k --ioengine=io_uring --iodepth=1 --time_based --runtime=1) ||
		fail "fio failed"
	# Terse v3: field 38 is the minimum total read latency in usec (clat,
	# field 14, starts after the submit syscall returned, when the request
	# was already queued and its timer running).
	min_us=$(echo "$out" | terse_field 38)
	ios=$(echo "$out" | terse_field 6)
	[ "$ios" -gt 0 ] || fail "no I/O completed"
	log "completion_nsec=$nsec: min latency ${min_us}us"
	[ "$min_us" -ge $((nsec / 1000)) ] || fail "completion after ${min_us}us < ${nsec}ns"
	unload_rnull
done
