#!/bin/sh
# Fault injection: a chosen fraction of requests is dropped (blk-mq's
# timeout handler ends them with an error) or requeued once (served on the
# second try). The reader sees exactly the dropped ones as errors,
# requeues cost nothing but time, and the device keeps working afterwards.
. "$(dirname "$0")/lib.sh"

# One direct 4k read per dd is one request: count the failed ones.
load_rnull inject_timeout_percent=20 rq_timeout_ms=200 irqmode=1
# The partition scan at registration is subject to injection too.
base=$(dev_attr 0 injected_timeouts)
i=0
errs=0
while [ $i -lt 50 ]; do
	dd if=/dev/rnullb0 of=/dev/null bs=4k count=1 skip=$((i * 7)) iflag=direct 2>/dev/null ||
		errs=$((errs + 1))
	i=$((i + 1))
done
injected=$(($(dev_attr 0 injected_timeouts) - base))
log "50 reads: $errs failed, driver dropped $injected (and $base during the partition scan)"
[ "$injected" -gt 0 ] || fail "nothing injected in 50 requests at 20%"
expect_eq "$errs" "$injected" "failed reads vs injected timeouts"
unload_rnull

# fio sees the timeouts as ETIMEDOUT.
load_rnull inject_timeout_percent=100 rq_timeout_ms=200 irqmode=0
out=$(fio --output-format=terse --terse-version=3 --name=t --filename=/dev/rnullb0 \
	--direct=1 --rw=randread --bs=4k --ioengine=psync --number_ios=1 --size=1m 2>&1)
echo "$out" | grep -q 'Connection timed out' || fail "fio did not see ETIMEDOUT: $out"
unload_rnull

# Injection off: the device serves normally.
load_rnull
dd if=/dev/rnullb0 of=/dev/null bs=4k count=64 iflag=direct 2>/dev/null || fail "device broken after timeouts"
unload_rnull

# Requeues: data stays intact, no error reaches fio.
load_rnull inject_requeue_percent=50 memory_backed=1 gb=1 irqmode=2 completion_nsec=5000
out=$(fio_terse --name=rq --filename=/dev/rnullb0 --direct=1 --rw=randwrite --bs=4k \
	--ioengine=io_uring --iodepth=8 --size=4m --verify=crc32c --do_verify=1) ||
	fail "fio verify failed with requeues"
expect_eq "$(echo "$out" | terse_field 5)" 0 "fio error status with requeues"
requeues=$(dev_attr 0 injected_requeues)
log "injected requeues: $requeues"
[ "$requeues" -gt 0 ] || fail "no requeue injected at 50%"
unload_rnull
