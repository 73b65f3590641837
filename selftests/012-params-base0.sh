#!/bin/sh
# Integer parameters and sysfs files read numbers as C's kstrtoint(s, 0)
# does, as null_blk's: "010" is octal 8, "0x10" is 16, "08" is invalid.
. "$(dirname "$0")/lib.sh"
trap cleanup_rnull EXIT

load_rnull nr_devices=010 hw_queue_depth=0x20 host_queue_depth=0100
n=$(ls -d /sys/block/rnullb* | wc -l)
[ "$n" = 8 ] || fail "nr_devices=010 made $n devices, not 8"
d=$(cat /sys/block/rnullb0/rnull/hw_queue_depth)
[ "$d" = 32 ] || fail "hw_queue_depth=0x20 reads $d, not 32"
h=$(cat /sys/module/rnull/host/depth)
[ "$h" = 64 ] || fail "host_queue_depth=0100 reads $h, not 64"
echo 0x30 >/sys/module/rnull/host/depth || fail "writing 0x30 to host/depth failed"
h=$(cat /sys/module/rnull/host/depth)
[ "$h" = 48 ] || fail "host/depth 0x30 reads $h, not 48"
if echo 08 >/sys/module/rnull/host/depth 2>/dev/null; then
	fail "08 (not octal) was accepted by host/depth"
fi
h=$(cat /sys/module/rnull/host/depth)
[ "$h" = 48 ] || fail "a refused write changed host/depth to $h"
unload_rnull
if insmod "$RNULL_KO" nr_devices=09 2>/dev/null; then
	fail "nr_devices=09 (not octal) was accepted"
fi
log "base 0 parsing as kstrtoint"
