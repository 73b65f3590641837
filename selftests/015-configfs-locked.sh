#!/bin/sh
# While a configfs device is powered on its settings are fixed, as
# null_blk's: every attribute but power, badblocks (a table changed at any
# time, 022-badblocks), submit_queues and poll_queues (changed live,
# 024-live-queues) refuses a valid new value with EBUSY and keeps its
# value; once powered off the same writes work. The zoned attributes are
# there only on a kernel with CONFIG_BLK_DEV_ZONED; zone_offline and
# zone_readonly act on a powered zoned device (027).
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/rnull
load_rnull nr_devices=0 host_queue_depth=16
d=$cfs/locked
mkdir $d || fail "mkdir $d"
echo 64 >$d/size || fail "size=64"
echo 1 >$d/power || fail "power=1"

# attribute and a valid value different from its default
values="badblocks_once 1
badblocks_partial_io 1
blocking 1
blocksize 4096
cache_size 16
completion_nsec 12345
discard 1
fua 0
host_tags 0
home_node 0
hw_queue_depth 7
index 9
irqmode 2
max_sectors 64
mbps 100
memory_backed 1
no_sched 1
queue_mode 0
rotational 1
rotational_model 1
shared_tag_bitmap 1
shared_tags 1
size 32
time_slice_us 250
use_per_node_hctx 1
virt_boundary 1
zone_append_max_sectors 8
zone_capacity 2
zone_full 1
zone_max_active 1
zone_max_open 1
zone_nr_conv 1
zone_size 4
zoned 1"

echo "$values" | while read -r attr v; do
	case $attr in zone*) [ -e "$d/$attr" ] || continue ;; esac
	before=$(cat $d/$attr)
	if echo "$v" >$d/$attr 2>/tmp/err; then
		fail "$attr=$v accepted while powered on"
	fi
	grep -q "busy" /tmp/err || fail "$attr=$v while powered: not EBUSY: $(cat /tmp/err)"
	expect_eq "$(cat $d/$attr)" "$before" "$attr unchanged while powered"
done || exit 1
# Every attribute of the directory is in the table (power aside; the fault
# injection groups, directories, change while on, as null_blk's).
for f in $(ls $d); do
	case $f in power | badblocks | submit_queues | poll_queues | zone_offline | zone_readonly) continue ;; esac
	[ -d "$d/$f" ] && continue
	echo "$values" | grep -q "^$f " || fail "attribute $f not checked"
done
[ -b /dev/rnullb0 ] || fail "rnullb0 gone after refused writes"

echo 0 >$d/power || fail "power=0"
echo "$values" | while read -r attr v; do
	echo "$v" >$d/$attr || fail "$attr=$v refused while powered off"
	expect_eq "$(cat $d/$attr)" "$v" "$attr after power=0"
done || exit 1
# The new settings make a device (index 9, one queue for the model); the
# module-wide tag set would need the module's queue depth.
echo 0 >$d/shared_tags || fail "shared_tags=0"
echo 1 >$d/power || fail "power=1 with the new settings"
[ -b /dev/rnullb9 ] || fail "rnullb9 missing (index=9)"
expect_eq "$(cat /sys/block/rnullb9/queue/logical_block_size)" 4096 "blocksize applied"
expect_eq "$(cat /sys/block/rnullb9/size)" $((32 << 11)) "size applied"
rmdir $d || fail "rmdir"
unload_rnull
