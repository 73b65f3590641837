#!/bin/sh
# Bad blocks (null_blk's configfs badblocks, badblocks_once,
# badblocks_partial_io): "+first-last" marks sectors bad and "-first-last"
# good, at any time, and a read lists the ranges; I/O touching a bad
# sector fails with EIO and the rest succeeds; the table outlives power
# cycles; in once mode a bad range heals after failing once; in partial
# mode a failing write moves the data before the bad block and still fails
# whole (a merged request fails all its bios, as null_blk's); hostile input is refused with
# EINVAL and a log line and changes nothing; a full table refuses with
# ENOSPC and changes nothing.
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/rnull
d=$cfs/bb
dev=/dev/rnullb0
load_rnull nr_devices=0
mkdir $d || fail "mkdir"
echo 64 >$d/size && echo 1 >$d/memory_backed || fail "size, memory_backed"
echo 1 >$d/power || fail "power=1"

# rd/wr SECTOR COUNT [FILE]: one direct I/O of 512-byte sectors.
rd() { sector-io read $dev "$1" "$2" "${3:-/dev/null}" 2>/dev/null; }
wr() { sector-io write $dev "$1" "$2" "$3" 2>/dev/null; }
table() { cat $d/badblocks | tr '\n' ' ' | sed 's/ $//'; }
# must_fail rd|wr ...: the I/O fails with EIO (sector-io exits 3), not
# some other way.
must_fail() {
	"$@"
	rc=$?
	[ $rc -ne 0 ] || fail "$* succeeded on a bad range"
	[ $rc -eq 3 ] || fail "$* failed, but not with EIO (sector-io exit $rc)"
}

# merged_write WHAT FAILED: three adjacent 4 KiB writes from 400 in one
# submission, FAILED of which fail once they merge into one request.
# libaio's three-write batch is plugged and merges, but nothing promises
# it: up to 5 tries, and if none merged, $unmerged names the check, which
# makes the test a SKIP at its end (after every other check).
merged_write() {
	try=0
	while [ $try -lt 5 ]; do
		try=$((try + 1))
		merges0=$(awk '{print $6}' /sys/block/rnullb0/stat)
		fio --name=merge --filename=$dev --direct=1 --ioengine=libaio --rw=write --bs=4k \
			--offset=$((400 * 512)) --size=12k --iodepth=3 --iodepth_batch_submit=3 \
			--continue_on_error=all >/tmp/merge.out 2>&1
		merged=$(($(awk '{print $6}' /sys/block/rnullb0/stat) - merges0))
		errs=$(sed -n 's/.*errors *: total=\([0-9]*\),.*/\1/p' /tmp/merge.out)
		log "$1 (try $try): $merged merges, ${errs:-0} writes failed"
		if [ "$merged" -eq 2 ]; then
			expect_eq "${errs:-0}" "$2" "$1: writes failing in one merged request"
			return
		fi
	done
	unmerged="$unmerged $1"
}
unmerged=
# The permission check below needs su and the nobody user.
command -v su >/dev/null || skip "su is missing"
out=$(su nobody -s /bin/sh -c 'echo $USER' 2>&1)
[ "$out" = nobody ] || skip "su nobody does not work: $out"

expect_eq "$(table)" "" "a new table"
rd 0 256 || fail "read before any bad block"

# Set while the device runs; reads and writes of the range fail, the rest
# goes on.
echo "+100-107" >$d/badblocks || fail "+100-107"
expect_eq "$(table)" "100 8" "table after +100-107"
dd if=/dev/urandom of=/tmp/a bs=512 count=16 2>/dev/null
must_fail rd 100 1
must_fail rd 107 1
must_fail rd 96 8
must_fail wr 104 1 /tmp/a
rd 92 8 || fail "read of 92..99 next to the bad range"
rd 108 8 || fail "read of 108..115 next to the bad range"
wr 0 16 /tmp/a || fail "write away from the bad range"

# Part of a range made good again; ranges are listed in sector order.
echo "-100-103" >$d/badblocks || fail "-100-103"
expect_eq "$(table)" "104 4" "table after -100-103"
rd 100 4 || fail "read of the healed 100..103"
must_fail rd 104 1
echo "+2000-2000" >$d/badblocks && echo "+1000-1099" >$d/badblocks || fail "+2000, +1000-1099"
expect_eq "$(table)" "104 4 1000 100 2000 1" "three ranges"
# Numbers as kstrtoull(s, 0) reads them, surrounding blanks ignored.
echo " +0x10-0x17 " >$d/badblocks || fail "+0x10-0x17"
echo "-020-023" >$d/badblocks || fail "-020-023 (octal)"
expect_eq "$(table)" "20 4 104 4 1000 100 2000 1" "hexadecimal and octal"
echo "-0-34359738367" >$d/badblocks || fail "clear everything"
expect_eq "$(table)" "" "table after clearing everything"
rd 0 4096 || fail "read after clearing everything"

# Hostile input: EINVAL, a log line naming the attribute, nothing changed.
echo "+100-107" >$d/badblocks || fail "+100-107 again"
bad=0
kmsg_mark
for v in "" "100-107" "*1-2" "+5" "+7-5" "+-1-5" "+1--5" "+a-5" "+1-5x" "+1 -5" \
	"+1-34359738368" "+99999999999999999999-1" "-" "+" "+1-" "++1-2x"; do
	if echo "$v" >$d/badblocks 2>/tmp/err; then fail "badblocks accepted '$v'"; fi
	grep -q "Invalid argument" /tmp/err || fail "'$v': not EINVAL: $(cat /tmp/err)"
	expect_eq "$(table)" "100 8" "table after '$v'"
	bad=$((bad + 1))
done
# One line per refusal, up to the rate limit's burst.
[ "$bad" -le "$RATELIMIT_BURST" ] || bad=$RATELIMIT_BURST
expect_eq "$(kmsg_since | grep -c "for configfs rnull/bb/badblocks: must be")" $bad "log lines for refused writes"
if su nobody -s /bin/sh -c "echo +1-2 > $d/badblocks" 2>/tmp/err; then fail "nobody wrote badblocks"; fi
grep -q "Permission denied" /tmp/err || fail "nobody's write: not EACCES: $(cat /tmp/err)"
echo "+34359738367-34359738367" >$d/badblocks || fail "the last sector refused"
echo "-34359738367-34359738367" >$d/badblocks || fail "-last sector"
expect_eq "$(table)" "100 8" "table after the boundary"

# A full table (512 ranges) refuses more with ENOSPC and keeps what it had,
# also for a removal that would split a range.
echo "-0-34359738367" >$d/badblocks
i=0
while [ $i -lt 512 ]; do
	echo "+$((i * 4))-$((i * 4 + 2))" >$d/badblocks || fail "range $i refused"
	i=$((i + 1))
done
before=$(cat $d/badblocks | md5sum)
expect_eq "$(cat $d/badblocks | wc -l)" 512 "ranges in the full table"
# The refusals above used this file's rate-limit burst; a new 5 s
# interval logs again.
sleep 5
kmsg_mark
for v in "+5000-5000" "-1-1"; do
	if echo "$v" >$d/badblocks 2>/tmp/err; then fail "full table accepted '$v'"; fi
	grep -q "No space left" /tmp/err || fail "'$v' on a full table: not ENOSPC: $(cat /tmp/err)"
	expect_eq "$(cat $d/badblocks | md5sum)" "$before" "full table after '$v'"
done
kmsg_since | grep -q "rnull/bb/badblocks: '+5000-5000' refused: the table is full" || fail "no log line for ENOSPC"
must_fail rd 4 1
rd 3 1 || fail "read of a gap in the full table"
echo "-0-34359738367" >$d/badblocks || fail "clear the full table"
expect_eq "$(table)" "" "table after clearing the full one"

# The table belongs to the directory: it outlives a power cycle. The modes
# are settings, fixed while the device runs.
echo "+100-107" >$d/badblocks || fail "+100-107"
if echo 1 >$d/badblocks_once 2>/dev/null; then fail "badblocks_once changed while powered"; fi
echo 0 >$d/power || fail "power=0"
expect_eq "$(table)" "100 8" "table while powered off"
echo 1 >$d/badblocks_once || fail "badblocks_once=1"
echo 1 >$d/power || fail "power=1 in once mode"

# Once mode: a range fails one request, then is good.
echo "+200-207" >$d/badblocks || fail "+200-207"
must_fail rd 204 1
rd 200 8 || fail "once: second read of 200..207"
expect_eq "$(table)" "100 8" "once: table after the failed read"
must_fail wr 96 8 /tmp/a
wr 96 8 /tmp/a || fail "once: second write over 100"
expect_eq "$(table)" "" "once: table after the failed write"

# failed_write WHAT FIRST BAD GOOD: writes /tmp/old over FIRST..FIRST+15,
# marks BAD (a range) bad, checks that writing /tmp/new there fails, clears
# BAD, and checks that the first GOOD bytes read back are /tmp/new's (what
# the failed write moved) and the rest /tmp/old's.
failed_write() {
	wr "$2" 16 /tmp/old || fail "$1: write of $2.."
	echo "+$3" >$d/badblocks || fail "$1: +$3"
	must_fail wr "$2" 16 /tmp/new
	echo "-$3" >$d/badblocks || fail "$1: -$3"
	rd "$2" 16 /tmp/got || fail "$1: read back from $2"
	[ "$4" = 0 ] || expect_eq "$(head -c "$4" /tmp/got | md5sum)" \
		"$(head -c "$4" /tmp/new | md5sum)" "$1: the first $4 bytes written"
	expect_eq "$(tail -c "+$(($4 + 1))" /tmp/got | md5sum)" \
		"$(tail -c "+$(($4 + 1))" /tmp/old | md5sum)" "$1: the rest untouched"
}

# Partial mode: a write stops at the bad block, the data before it lands.
echo 0 >$d/power && echo 0 >$d/badblocks_once && echo 1 >$d/badblocks_partial_io ||
	fail "partial mode settings"
echo 1 >$d/power || fail "power=1 in partial mode"
dd if=/dev/urandom of=/tmp/old bs=512 count=16 2>/dev/null
dd if=/dev/urandom of=/tmp/new bs=512 count=16 2>/dev/null
failed_write partial 300 310-311 5120
# Bad again, for the plain mode below.
echo "+310-311" >$d/badblocks || fail "+310-311 again"
# Three 4 KiB writes submitted together (libaio plugs three or more) merge
# into one request; it fails at sector 410 and, as null_blk's, fails whole:
# the first bio (400..407), whose data moved, fails with the other two.
echo "+410-410" >$d/badblocks || fail "+410-410"
merged_write "partial" 3
echo 0 >$d/power || fail "power=0"

# Without partial mode a failing write moves nothing, and the merged
# request fails as a whole. (300..315 is written whole first, so that
# nothing of the partial write above counts.)
echo 0 >$d/badblocks_partial_io && echo 1 >$d/power || fail "plain mode"
echo "-310-311" >$d/badblocks || fail "plain: -310-311"
failed_write plain 300 310-311 0
merged_write "plain" 3

# With 4 KiB blocks a partial write stops at the bad sector's block.
echo 0 >$d/power && echo 4096 >$d/blocksize && echo 1 >$d/badblocks_partial_io &&
	echo "-0-34359738367" >$d/badblocks && echo 1 >$d/power || fail "4 KiB blocks"
failed_write 4k 400 410-410 4096

# rmdir with the device on, then the module goes.
rmdir $d || fail "rmdir"
unload_rnull
[ -z "$unmerged" ] || skip "the writes of the merged-request check never merged:$unmerged"
