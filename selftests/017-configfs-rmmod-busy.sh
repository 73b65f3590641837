#!/bin/sh
# A configfs directory pins the module (ct_owner), powered on or not, and so
# does an open attribute file (ca_owner): rmmod is refused until both are
# gone. A device powered off while its disk is open goes away cleanly.
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/rnull
load_rnull nr_devices=0
d=$cfs/busy
mkdir $d || fail "mkdir $d"
if rmmod rnull 2>/tmp/rmmod.err; then fail "rmmod succeeded with $d present"; fi
log "rmmod refused with a directory: $(cat /tmp/rmmod.err)"
rnull_loaded || fail "module gone after refused rmmod"

echo 1 >$d/power || fail "power=1"
if rmmod rnull 2>/dev/null; then fail "rmmod succeeded with $d powered on"; fi
dd if=/dev/rnullb0 of=/dev/null bs=4096 count=4 iflag=direct 2>/dev/null ||
	fail "device stopped working after refused rmmod"

# Power off with the disk open: the disk goes, the open file fails I/O.
exec 3</dev/rnullb0
echo 0 >$d/power || fail "power=0 with the disk open"
[ ! -e /sys/block/rnullb0 ] || fail "rnullb0 still in sysfs after power=0"
if dd if=/dev/stdin of=/dev/null bs=4096 count=1 iflag=direct <&3 2>/dev/null; then
	log "note: a read on the stale file descriptor succeeded"
fi
exec 3<&-

# An open attribute file pins the module once the directory is gone.
exec 4<$cfs/features
rmdir $d || fail "rmdir"
if rmmod rnull 2>/dev/null; then fail "rmmod succeeded with features open"; fi
exec 4<&-
unload_rnull
[ ! -e $cfs ] || fail "$cfs left after rmmod"
