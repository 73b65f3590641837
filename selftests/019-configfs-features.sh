#!/bin/sh
# /sys/kernel/config/rnull/features lists exactly the device attributes that
# work: every file of a device directory (its fault injection groups are
# directories, which null_blk's list leaves out too); the zoned ones only
# where the kernel has zoned devices (027 checks they are listed there).
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/rnull
load_rnull nr_devices=0
features=$(cat $cfs/features) || fail "read features"
log "features: $features"
mkdir $cfs/f || fail "mkdir"
files=$(find $cfs/f -mindepth 1 -maxdepth 1 -type f -exec basename {} \; | sort |
	tr '\n' ',' | sed 's/,$//')
listed=$(echo "$features" | tr ',' '\n' | sort | tr '\n' ',' | sed 's/,$//')
expect_eq "$listed" "$files" "features against the directory's files"
for f in $(echo "$features" | tr ',' ' '); do
	[ -w $cfs/f/$f ] || fail "feature $f is not a writable file"
done
if echo 1 >$cfs/features 2>/dev/null; then fail "features accepted a write"; fi
rmdir $cfs/f || fail "rmdir"
unload_rnull
