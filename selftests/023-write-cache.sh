#!/bin/sh
# A volatile write cache (null_blk's cache_size) on a memory-backed
# device: the queue reports write back (and FUA with fua=1); writes land in
# the cache (rnull/cache_pages grows, rnull/pages does not) and read back
# from it; a flush writes it back; a FUA write goes to the store and keeps
# a cached copy current; a full cache writes pages back to make room; a
# power cycle keeps the store (as null_blk's configfs devices) and loses
# what the cache held; without fua the block layer turns a FUA write into
# write + flush; without cache_size the device is write-through.
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/rnull
d=$cfs/wc
dev=/dev/rnullb0
q=/sys/block/rnullb0/queue
rd() { sector-io read $dev "$1" "$2" "$3"; }
wr() { sector-io write $dev "$1" "$2" "$3"; }
# reads SECTOR COUNT WANT WHAT: the sectors hold the file WANT.
reads() {
	rd "$1" "$2" /tmp/got || fail "$4: read of $1+$2 failed"
	cmp -s /tmp/got "$3" || fail "$4: data differs"
	log "ok: $4"
}
for f in a b c e z; do
	dd if=/dev/urandom of=/tmp/$f bs=4096 count=8 2>/dev/null
done
dd if=/dev/zero of=/tmp/z bs=4096 count=8 2>/dev/null

# The module parameter: a write-back cache on memory-backed devices.
load_rnull memory_backed=1 gb=1 cache_size=2
expect_eq "$(dev_attr 0 cache_size)" 2 "rnull/cache_size from the parameter"
expect_eq "$(cat $q/write_cache)" "write back" "queue/write_cache with a cache"
expect_eq "$(cat $q/fua)" 1 "queue/fua with a cache"
# Random writes through a 2 MiB cache over 16 MiB, verified: pages go back
# to the store to make room and every read finds the latest data.
out=$(fio_terse --name=wc --filename=$dev --direct=1 --ioengine=io_uring --iodepth=16 \
	--rw=randwrite --bsrange=512-64k --size=16M --verify=crc32c --do_verify=1) ||
	fail "verify through the cache failed"
expect_eq "$(echo "$out" | terse_field 5)" 0 "verify through the cache"
cached=$(dev_attr 0 cache_pages)
log "after 16 MiB of writes: $cached pages cached, $(dev_attr 0 pages) stored"
[ "$cached" -le 512 ] || fail "the 2 MiB cache holds $cached pages"
[ "$(dev_attr 0 pages)" -gt 0 ] || fail "a full cache wrote nothing back"
unload_rnull
# cache_size needs memory_backed (null_blk's rule).
load_rnull cache_size=2
expect_eq "$(dev_attr 0 cache_size)" 0 "rnull/cache_size without memory_backed"
expect_eq "$(cat $q/write_cache)" "write through" "queue/write_cache without memory_backed"
unload_rnull

load_rnull nr_devices=0
mkdir $d || fail "mkdir"
echo 64 >$d/size && echo 1 >$d/memory_backed && echo 1 >$d/cache_size && echo 1 >$d/discard ||
	fail "settings"
echo 1 >$d/power || fail "power=1"
expect_eq "$(cat $q/write_cache)" "write back" "configfs: queue/write_cache"
expect_eq "$(dev_attr 0 cache_size)" 1 "configfs: rnull/cache_size"

# Writes land in the cache and read back from it.
wr 0 64 /tmp/a || fail "write of 0..63"
expect_eq "$(dev_attr 0 cache_pages)" 8 "cache pages after 32 KiB"
expect_eq "$(dev_attr 0 pages)" 0 "stored pages before a flush"
reads 0 64 /tmp/a "read from the cache"

# A flush writes the cache back.
sector-io flush $dev || fail "flush"
expect_eq "$(dev_attr 0 cache_pages)" 0 "cache pages after a flush"
expect_eq "$(dev_attr 0 pages)" 8 "stored pages after a flush"
reads 0 64 /tmp/a "read after the flush"

# An O_DSYNC write to a block device is a FUA write and then a flush
# (blkdev's fsync). The FUA write goes to the store...
sector-io dsync $dev 1024 8 /tmp/b || fail "FUA write"
expect_eq "$(dev_attr 0 cache_pages)" 0 "cache pages after a FUA write"
expect_eq "$(dev_attr 0 pages)" 9 "stored pages after a FUA write"
# ...and keeps a cached copy of its page current, or the flush after it
# would write the stale copy back over it.
wr 2048 8 /tmp/b || fail "write of 2048..2055"
expect_eq "$(dev_attr 0 cache_pages)" 1 "a cached page"
sector-io dsync $dev 2048 1 /tmp/c || fail "FUA write into a cached page"
{ head -c 512 /tmp/c; tail -c +513 /tmp/b | head -c 3584; } >/tmp/want
reads 2048 8 /tmp/want "FUA write over a cached page"
expect_eq "$(dev_attr 0 cache_pages)" 0 "cache pages after the flush"

# A power cycle keeps the store and loses the cache.
wr 4096 8 /tmp/e || fail "write of 4096..4103"
expect_eq "$(dev_attr 0 cache_pages)" 1 "cache pages before the power cycle"
echo 0 >$d/power && echo 1 >$d/power || fail "power cycle"
expect_eq "$(dev_attr 0 cache_pages)" 0 "cache pages after a power cycle"
reads 0 64 /tmp/a "flushed data after a power cycle"
head -c 4096 /tmp/b >/tmp/b4
reads 1024 8 /tmp/b4 "FUA data after a power cycle"
reads 2048 8 /tmp/want "written-back page after a power cycle"
head -c 4096 /tmp/z >/tmp/z4
reads 4096 8 /tmp/z4 "unflushed data lost in a power cycle"

# Without FUA the block layer writes and then flushes.
echo 0 >$d/power && echo 0 >$d/fua && echo 1 >$d/power || fail "fua=0"
expect_eq "$(cat $q/fua)" 0 "queue/fua with fua=0"
wr 4096 8 /tmp/e || fail "write of 4096..4103"
expect_eq "$(dev_attr 0 cache_pages)" 1 "cache pages before an O_DSYNC write"
sector-io dsync $dev 6144 8 /tmp/c || fail "O_DSYNC write without FUA"
expect_eq "$(dev_attr 0 cache_pages)" 0 "cache pages after write + flush"

# Discard drops cached and stored data.
wr 0 8 /tmp/b || fail "write of 0..7"
blkdiscard -o 0 -l 4096 $dev || fail "blkdiscard"
reads 0 8 /tmp/z4 "discarded page"

# No cache: write-through, no cached pages, no flush needed.
echo 0 >$d/power && echo 0 >$d/cache_size && echo 1 >$d/power || fail "cache_size=0"
expect_eq "$(cat $q/write_cache)" "write through" "queue/write_cache without a cache"
pages=$(dev_attr 0 pages)
wr 8192 8 /tmp/e || fail "write-through write"
expect_eq "$(dev_attr 0 cache_pages)" 0 "cache pages without a cache"
expect_eq "$(dev_attr 0 pages)" $((pages + 1)) "stored at once without a cache"
rmdir $d || fail "rmdir"
unload_rnull
