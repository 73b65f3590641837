#!/bin/sh
# A memory-backed device keeps data: fio verify=crc32c passes for
# sequential, random and mixed-size writes, a later read-only pass finds the
# data still there, never-written sectors read as zeroes and discard zeroes.
. "$(dirname "$0")/lib.sh"

load_rnull memory_backed=1 discard=1 gb=1 submit_queues="$(nproc)"
dev=/dev/rnullb0

# Never-written sectors read back as zeroes.
dd if=$dev of=/tmp/zero.chk bs=4096 count=64 skip=1000 iflag=direct 2>/dev/null
dd if=/dev/zero of=/tmp/zero.ref bs=4096 count=64 2>/dev/null
cmp -s /tmp/zero.chk /tmp/zero.ref || fail "unwritten sectors are not zero"

common="--filename=$dev --direct=1 --ioengine=io_uring --iodepth=8 --verify=crc32c --do_verify=1"
run_fio() {
	out=$(fio_terse --name="$1" $common $2) || fail "fio $1 failed"
	expect_eq "$(echo "$out" | terse_field 5)" 0 "fio $1 error status"
}
run_fio seq "--rw=write --bs=4k --offset=0 --size=8M"
run_fio rand "--rw=randwrite --bs=4k --offset=16M --size=8M"
run_fio mixed "--rw=randwrite --bsrange=512-64k --offset=32M --size=8M"

# The same data read back by a separate pass, after other I/O.
dd if=/dev/zero of=$dev bs=1M count=4 seek=100 oflag=direct 2>/dev/null
out=$(fio_terse --name=seq $common --rw=write --bs=4k --offset=0 --size=8M --verify_only) ||
	fail "read-back of sequential data failed"
expect_eq "$(echo "$out" | terse_field 5)" 0 "read-back error status"

# Discard frees pages and reads back zeroes.
pages=$(dev_attr 0 pages)
[ "$pages" -gt 0 ] || fail "no pages allocated after writes"
blkdiscard -o 0 -l $((8 << 20)) $dev || fail "blkdiscard failed"
dd if=$dev of=/tmp/disc.chk bs=4096 count=64 iflag=direct 2>/dev/null
cmp -s /tmp/disc.chk /tmp/zero.ref || fail "discarded range does not read as zeroes"
after=$(dev_attr 0 pages)
[ "$after" -lt "$pages" ] || fail "discard freed no pages ($pages -> $after)"
log "pages: $pages before discard, $after after"
unload_rnull
