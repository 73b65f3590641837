#!/bin/sh
# Memory pressure is no I/O error: with fail_page_alloc failing some of
# fio's allocations that may not sleep (GFP_NOWAIT: the pages a
# memory-backed or cached write takes under RCU or the cache's lock),
# writes are retried, not failed, and fio verifies every byte; on a
# memory-backed device, one with a write cache (flushes too) and a
# blocking one. Needs CONFIG_FAIL_PAGE_ALLOC and
# CONFIG_FAULT_INJECTION_DEBUG_FS (skipped without).
. "$(dirname "$0")/lib.sh"

f=/sys/kernel/debug/fail_page_alloc
[ -e $f/probability ] || skip "$f is missing: needs CONFIG_FAIL_PAGE_ALLOC and CONFIG_FAULT_INJECTION_DEBUG_FS (the debug kernel, make test-debug)"

# Only tasks that ask (fio, through make-it-fail) and only allocations
# that cannot sleep; 10% of them, up to $budget.
budget=1000000
echo Y >$f/task-filter
echo Y >$f/ignore-gfp-wait
echo N >$f/ignore-gfp-highmem
echo 0 >$f/min-order
echo 0 >$f/verbose
echo 1 >$f/interval
echo 10 >$f/probability
echo $budget >$f/times
stop_failing() { echo 0 >$f/probability; echo 0 >$f/times; }
trap 'stop_failing; cleanup_rnull' EXIT

# verify WHAT PARAMS...: fio writes and verifies 32 MiB on rnullb0 of a
# module loaded with PARAMS, while allocations fail.
verify() {
	what=$1
	shift
	load_rnull "$@"
	before=$(cat $f/times)
	out=$(sh -c 'echo 1 >/proc/self/make-it-fail && exec fio --output-format=terse \
		--terse-version=3 --name=v --filename=/dev/rnullb0 --direct=1 \
		--ioengine=libaio --rw=randwrite --bs=16k --iodepth=16 --size=32m \
		--fsync=64 --verify=crc32c --do_verify=1' 2>&1)
	rc=$?
	failed=$((before - $(cat $f/times)))
	[ $rc -eq 0 ] || fail "$what: fio failed under fail_page_alloc ($failed allocations failed): $out"
	line=$(echo "$out" | grep '^3;')
	expect_eq "$(echo "$line" | terse_field 5)" 0 "$what: fio error status"
	[ $failed -gt 0 ] || fail "$what: no allocation failed: the scenario tested nothing"
	retries=$(cat /sys/block/rnullb0/rnull/nomem_retries)
	[ "$retries" -gt 0 ] || fail "$what: $failed allocations failed, none of rnull's: no request was retried"
	log "$what: verified with $failed failed allocations, $retries retries"
	unload_rnull
}

verify memory-backed memory_backed=1 gb=1
verify cached memory_backed=1 gb=1 cache_size=4
verify blocking memory_backed=1 gb=1 blocking=1 cache_size=4
