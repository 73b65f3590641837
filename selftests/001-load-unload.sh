#!/bin/sh
# rnull loads with defaults, shows rnullb0 with its sysfs directory, serves
# a read and a write, and unloads without leaving the disk behind.
. "$(dirname "$0")/lib.sh"

load_rnull
[ -b /dev/rnullb0 ] || fail "/dev/rnullb0 is not a block device"
[ -d /sys/block/rnullb0/rnull ] || fail "/sys/block/rnullb0/rnull is missing"
dd if=/dev/rnullb0 of=/dev/null bs=4096 count=16 iflag=direct 2>/dev/null ||
	fail "direct read from /dev/rnullb0 failed"
dd if=/dev/zero of=/dev/rnullb0 bs=4096 count=16 oflag=direct 2>/dev/null ||
	fail "direct write to /dev/rnullb0 failed"
unload_rnull
[ ! -e /sys/block/rnullb0 ] || fail "/sys/block/rnullb0 still exists after rmmod"
log "load, I/O and unload ok"
