#!/bin/sh
# Hostile input for every configfs attribute `features` lists, generated
# from its range (the module parameter's, from modinfo, or hostile.table's)
# by the hostile-input tool: range ends and one past them, overflow (2^31,
# 2^32, 2^63, 2^64 and past, negatives, wrapping spellings), C base-0
# spellings, whitespace and newlines, signs, garbage, embedded NULs and
# writes of a page and more. Each is accepted or refused as kstrtoll(s, 0)
# and the range say; a refusal is EINVAL, changes nothing and logs at most
# one line naming the attribute and its range (the first refusal exactly
# one); user nobody cannot write. host_tags=1 is refused without a host
# budget.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"

cfs=/sys/kernel/config/rnull
load_rnull nr_devices=0 host_queue_depth=16
mkdir $cfs/hostile || fail "mkdir"
configfs_files hostile | grep -v '/power ' >/tmp/hostile.files
[ -s /tmp/hostile.files ] || fail "features lists no attribute"
hostile_files </tmp/hostile.files
rmdir $cfs/hostile || fail "rmdir"
# power in a directory of default settings: the other attributes were
# left at their last accepted values.
mkdir $cfs/hostile || fail "mkdir again"
configfs_files hostile | grep '/power ' >/tmp/hostile.files
[ -s /tmp/hostile.files ] || fail "features lists no power"
hostile_files </tmp/hostile.files
[ ! -e /sys/block/rnullb0 ] || fail "the device outlived power=0"
rmdir $cfs/hostile || fail "rmdir"
unload_rnull

# host_tags=1 needs a host budget.
load_rnull nr_devices=0
d=$cfs/nobudget
mkdir $d || fail "mkdir $d"
expect_eq "$(cat $d/host_tags)" 0 "host_tags without a budget"
if echo 1 >$d/host_tags 2>/dev/null; then
	fail "host_tags=1 accepted without a host budget"
fi
# The last lines: the ring buffer is full of refusals by now, so a line
# count (kmsg_mark) no longer moves.
dmesg | tail -n 2 | grep -q "rnull/nobudget/host_tags: there is no host budget" ||
	fail "no log line for host_tags=1 without a budget"
expect_eq "$(cat $d/host_tags)" 0 "host_tags after the refusal"
rmdir $d || fail "rmdir"
unload_rnull
hostile_verdict "$h_files configfs attributes"
