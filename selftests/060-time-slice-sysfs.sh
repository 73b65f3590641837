#!/bin/sh
# Every hardware queue (poll queues too) has /sys/block/rnullbN/mq/<n>/time_slice_us: the
# module parameter sets the initial value, writes read back, bad values
# give EINVAL and change nothing, non-root writes are refused.
. "$(dirname "$0")/lib.sh"

cpus=$(nproc)
load_rnull submit_queues="$cpus" poll_queues=1 time_slice_us=250
n=0
for d in /sys/block/rnullb0/mq/*; do
	expect_eq "$(cat "$d/time_slice_us")" 250 "$(basename "$d")/time_slice_us initial"
	n=$((n + 1))
done
# The poll queue too.
expect_eq "$n" "$((cpus + 1))" "hardware queues with time_slice_us"

f=/sys/block/rnullb0/mq/0/time_slice_us
for v in 0 1 1000 100000; do
	echo "$v" >"$f" || fail "time_slice_us refused $v"
	expect_eq "$(cat "$f")" "$v" "time_slice_us after writing $v"
done
for bad in -1 100001 abc "" 1x 2.5 99999999999999999999; do
	if echo "$bad" >"$f" 2>/dev/null; then
		fail "time_slice_us accepted '$bad'"
	fi
	expect_eq "$(cat "$f")" 100000 "time_slice_us unchanged after '$bad'"
done
if su nobody -s /bin/sh -c "echo 5 > $f" 2>/dev/null; then
	fail "nobody could write time_slice_us"
fi
expect_eq "$(cat "$f")" 100000 "time_slice_us unchanged after nobody's write"
unload_rnull
