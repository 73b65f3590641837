#!/bin/sh
# The rotational model completes no request before the drive could have:
# with every seek 2 ms and a cache that holds one request, a random read
# takes at least a seek (timers never fire early, so this lower bound holds
# however slow the guest is, on the wall clock or on virtual time), and the
# drive counts it as a miss. With the default cache, one sequential reader
# is served from read-ahead: most of its reads are hits.
. "$(dirname "$0")/lib.sh"

load_rnull rotational_model=1 gb=16 seek_min_us=2000 seek_max_us=2000 \
	cache_segments=1 segment_kib=4 readahead_min_kib=0
# fio's default seed (randrepeat=1) makes the offsets the same every run: no
# two successive ones on one track (which would need no seek).
out=$(fio_terse --name=lat --filename=/dev/rnullb0 --direct=1 --rw=randread \
	--bs=4k --ioengine=libaio --iodepth=1 --number_ios=20) ||
	fail "fio failed"
# Terse v3 field 6: KiB read.
ios=$(($(echo "$out" | terse_field 6) / 4))
[ "$ios" -gt 0 ] || fail "no I/O completed"
# Terse v3 field 38: minimum total read latency in usec.
min_us=$(echo "$out" | terse_field 38)
misses=$(sed -n 's/^misses //p' /sys/block/rnullb0/rnull/model_stats)
log "$ios random reads, min latency ${min_us}us, $misses misses"
[ "$min_us" -ge 2000 ] || fail "a random read completed after ${min_us}us, before its 2 ms seek"
[ "$misses" -ge "$ios" ] || fail "$misses misses for $ios random reads"
unload_rnull

load_rnull rotational_model=1 gb=1
fio_terse --name=seq --filename=/dev/rnullb0 --direct=1 --rw=read --bs=4k \
	--ioengine=libaio --iodepth=1 --number_ios=2000 >/dev/null || fail "fio failed"
stats=$(cat /sys/block/rnullb0/rnull/model_stats)
hits=$(echo "$stats" | sed -n 's/^hits //p')
misses=$(echo "$stats" | sed -n 's/^misses //p')
log "one sequential reader: $(echo "$stats" | tr '\n' ' ')"
[ "$hits" -gt $((misses * 10)) ] || fail "sequential reads: $hits hits, $misses misses"
unload_rnull
