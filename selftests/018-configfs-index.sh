#!/bin/sh
# Device indexes: a configfs device takes the lowest free index unless its
# index is set; an index in use (load-time or configfs) is refused at power
# on with EEXIST and a log line, leaving the directory off; freed indexes
# are reused; no two devices share a name.
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/rnull
load_rnull nr_devices=2
mkdir $cfs/a $cfs/b $cfs/c $cfs/d || fail "mkdir"

echo 1 >$cfs/a/power || fail "a: power=1"
expect_eq "$(cat $cfs/a/index)" 2 "a: lowest free index after rnullb0, rnullb1"
[ -b /dev/rnullb2 ] || fail "rnullb2 missing"

# A load-time device's index.
echo 1 >$cfs/b/index || fail "b: index=1"
kmsg_mark
if echo 1 >$cfs/b/power 2>/tmp/err; then fail "b: index 1 (rnullb1) accepted twice"; fi
grep -q "File exists" /tmp/err || fail "b: not EEXIST: $(cat /tmp/err)"
kmsg_since | grep -q "index 1 is taken" || fail "b: no log line for the taken index"
expect_eq "$(cat $cfs/b/power)" 0 "b: power after the refusal"
expect_eq "$(cat $cfs/b/index)" 1 "b: index kept after the refusal"

# Two directories asking for the same index.
echo 5 >$cfs/b/index || fail "b: index=5"
echo 5 >$cfs/c/index || fail "c: index=5"
echo 1 >$cfs/b/power || fail "b: power=1 on index 5"
[ -b /dev/rnullb5 ] || fail "rnullb5 missing"
if echo 1 >$cfs/c/power 2>/dev/null; then fail "c: index 5 accepted twice"; fi
expect_eq "$(cat $cfs/c/power)" 0 "c: power after the refusal"

# The lowest free index skips the taken ones; a freed index is reused.
echo 1 >$cfs/d/power || fail "d: power=1"
expect_eq "$(cat $cfs/d/index)" 3 "d: lowest free index"
echo 0 >$cfs/b/power || fail "b: power=0"
[ ! -e /sys/block/rnullb5 ] || fail "rnullb5 left after power=0"
echo 1 >$cfs/c/power || fail "c: power=1 once index 5 is free"
[ -b /dev/rnullb5 ] || fail "rnullb5 missing for c"
echo 63 >$cfs/b/index || fail "b: index=63"
echo 1 >$cfs/b/power || fail "b: power=1 on index 63"
[ -b /dev/rnullb63 ] || fail "rnullb63 missing"

# Back to automatic: -1.
echo 0 >$cfs/d/power && echo 7 >$cfs/d/index && echo -1 >$cfs/d/index || fail "d: index=-1"
expect_eq "$(cat $cfs/d/index)" -1 "d: index after -1"
echo 1 >$cfs/d/power || fail "d: power=1 again"
expect_eq "$(cat $cfs/d/index)" 3 "d: lowest free index again"

n=$(ls /sys/block | grep -c '^rnullb')
expect_eq "$n" 6 "disks (2 load-time, 4 configfs)"
rmdir $cfs/a $cfs/b $cfs/c $cfs/d || fail "rmdir"
expect_eq "$(ls /sys/block | grep -c '^rnullb')" 2 "disks after rmdir"
unload_rnull
