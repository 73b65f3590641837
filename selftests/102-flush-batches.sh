#!/bin/sh
# A flush of a large write cache does not hold the device's other I/O off
# for the whole write-back: it writes back in batches and drops the cache
# lock between them, so a read running meanwhile waits for one batch, not
# for the flush. (Reads of a cached device run under the same lock.)
. "$(dirname "$0")/lib.sh"
requires_cpus 2

dev=/dev/rnullb0
# now_cs: hundredths of a second since boot.
now_cs() { tr -d . </proc/uptime | cut -d' ' -f1; }

load_rnull memory_backed=1 gb=1 cache_size=256
fill() {
	fio --name=fill --filename=$dev --direct=1 --ioengine=libaio --rw=write --bs=1m \
		--iodepth=4 --size=256m >/dev/null 2>&1 || fail "filling the cache failed"
}

# The flush alone: how long it holds a whole cache's worth of work.
fill
log "cached: $(dev_attr 0 cache_pages) pages"
t0=$(now_cs)
sector-io flush $dev || fail "flush"
alone=$(($(now_cs) - t0))
expect_eq "$(dev_attr 0 cache_pages)" 0 "pages cached after the flush"
log "a flush of 256 MiB took ${alone}0 ms"
[ "$alone" -ge 10 ] || skip "a flush of 256 MiB took ${alone}0 ms: too fast to tell batches apart"

# Again with 4 KiB reads (queue depth 1) of the cached data meanwhile.
fill
fio --output-format=terse --terse-version=3 --name=r --filename=$dev --direct=1 \
	--ioengine=psync --rw=randread --bs=4k --size=256m --time_based --runtime=600 \
	>/tmp/reads.out 2>&1 &
pid=$!
sleep 1
t0=$(now_cs)
sector-io flush $dev || fail "flush with reads"
during=$(($(now_cs) - t0))
sleep 0.5
kill -INT $pid
wait $pid
line=$(grep '^3;' /tmp/reads.out) || fail "no fio result: $(cat /tmp/reads.out)"
# Field 15: the reads' longest completion latency, in us.
max_us=$(echo "$line" | terse_field 15)
log "flush with reads: ${during}0 ms; longest read: $max_us us"
# Held for the whole flush, a read would wait about as long as the flush.
[ "$max_us" -lt $((alone * 10000 / 4)) ] ||
	fail "a read waited $max_us us, a quarter or more of a whole flush (${alone}0 ms)"
unload_rnull
