#!/bin/sh
# 64 configfs devices: made, powered on (rnullb0..rnullb63), the 65th
# refused for want of an index, all powered off and removed, twice; the
# module then unloads (099-kmemleak checks that nothing leaked).
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/rnull
load_rnull nr_devices=0 host_queue_depth=32
for round in 1 2; do
	i=0
	while [ $i -lt 64 ]; do
		mkdir $cfs/d$i || fail "round $round: mkdir d$i"
		echo 16 >$cfs/d$i/size
		echo 1 >$cfs/d$i/power || fail "round $round: power=1 on d$i"
		i=$((i + 1))
	done
	expect_eq "$(ls /sys/block | grep -c '^rnullb')" 64 "round $round: disks"
	[ -b /dev/rnullb63 ] || fail "round $round: rnullb63 missing"
	mkdir $cfs/extra || fail "round $round: mkdir extra"
	kmsg_mark
	if echo 1 >$cfs/extra/power 2>/dev/null; then fail "round $round: a 65th device"; fi
	kmsg_since | grep -q "no free index" || fail "round $round: no log line for the 65th"
	rmdir $cfs/extra
	# Some I/O on a few of them, in the host budget.
	for j in 0 31 63; do
		dd if=/dev/rnullb$j of=/dev/null bs=4096 count=64 iflag=direct 2>/dev/null ||
			fail "round $round: read rnullb$j"
	done
	i=0
	while [ $i -lt 64 ]; do
		# Half powered off first, half removed while powered.
		[ $((i % 2)) = 0 ] && { echo 0 >$cfs/d$i/power || fail "power=0 d$i"; }
		rmdir $cfs/d$i || fail "round $round: rmdir d$i"
		i=$((i + 1))
	done
	expect_eq "$(ls /sys/block | grep -c '^rnullb' || true)" 0 "round $round: disks after rmdir"
done
unload_rnull
