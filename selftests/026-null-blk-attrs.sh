#!/bin/sh
# null_blk's queue_mode, home_node, use_per_node_hctx, virt_boundary and
# shared_tag_bitmap, as module parameters and configfs attributes, and the
# parameters no_sched, discard and fua: what each does to the disk, and
# their bad values refused with EINVAL, the value unchanged; queue_mode's
# and home_node's checked against C null_blk's where the guest has it.
. "$(dirname "$0")/lib.sh"

dbg=/sys/kernel/debug/block
[ -d $dbg ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -d $dbg ] || fail "no blk-mq debugfs in /sys/kernel/debug/block"
cfs=/sys/kernel/config/rnull
param() { cat "/sys/module/rnull/parameters/$1"; }
hctxs() { ls "/sys/block/$1/mq" | wc -l; }

# Defaults, as null_blk's.
load_rnull
expect_eq "$(param queue_mode)" 2 "default queue_mode"
expect_eq "$(param home_node)" -1 "default home_node (NUMA_NO_NODE)"
expect_eq "$(param use_per_node_hctx)" 0 "default use_per_node_hctx"
expect_eq "$(param virt_boundary)" 0 "default virt_boundary"
expect_eq "$(param shared_tag_bitmap)" 0 "default shared_tag_bitmap"
expect_eq "$(cat /sys/block/rnullb0/queue/virt_boundary_mask)" 0 "virt_boundary_mask without virt_boundary"
! grep -q TAG_HCTX_SHARED $dbg/rnullb0/hctx0/flags ||
	fail "TAG_HCTX_SHARED without shared_tag_bitmap: $(cat $dbg/rnullb0/hctx0/flags)"
expect_eq "$(param no_sched)" 0 "default no_sched"
expect_eq "$(param discard)" 0 "default discard"
expect_eq "$(param fua)" 1 "default fua"
unload_rnull

# no_sched, discard, fua: as the configfs attributes of the same names.
q=/sys/block/rnullb0/queue
load_rnull memory_backed=1 gb=1 cache_size=1
expect_eq "$(cat $q/discard_max_hw_bytes)" 0 "discard_max_hw_bytes without discard"
expect_eq "$(cat $q/fua)" 1 "queue/fua with a write cache"
case "$(cat $q/scheduler)" in none) fail "no scheduler without no_sched" ;; esac
unload_rnull
load_rnull memory_backed=1 gb=1 cache_size=1 discard=1 fua=0 no_sched=1
[ "$(cat $q/discard_max_hw_bytes)" -gt 0 ] || fail "discard=1 without discard"
expect_eq "$(cat $q/fua)" 0 "queue/fua with fua=0"
expect_eq "$(cat $q/scheduler)" none "queue/scheduler with no_sched=1"
unload_rnull

# queue_mode=0 (bio) runs on blk-mq, saying so for each device it makes,
# as null_blk's null_add_dev(); the parameter stays 0. 1 (the legacy
# request path) fails the load with EINVAL. The parameter is decimal
# (null_blk's kstrtoint(s, 10)).
bio_msg="BIO-based IO path is no longer available, using blk-mq instead."
for n in 0 2; do
	kmsg_mark
	load_rnull queue_mode=0 nr_devices=$n
	expect_eq "$(kmsg_since | grep -cF "$bio_msg")" $n "queue_mode=0 messages with nr_devices=$n"
	expect_eq "$(param queue_mode)" 0 "queue_mode after queue_mode=0"
	unload_rnull
done
load_rnull queue_mode=0
[ -d /sys/block/rnullb0/mq/0 ] || fail "queue_mode=0 device is not blk-mq"
dd if=/dev/rnullb0 of=/dev/null bs=4k count=16 iflag=direct 2>/dev/null || fail "I/O with queue_mode=0"
unload_rnull
kmsg_mark
if insmod "$RNULL_KO" queue_mode=1 nr_devices=0 2>/dev/null; then fail "queue_mode=1 loaded"; fi
! rnull_loaded || fail "a refused queue_mode=1 left rnull loaded"
kmsg_since | grep -q "rnull: legacy IO path is no longer available$" ||
	fail "queue_mode=1 without null_blk's message"
for bad in 3 -1 0x2 010; do
	if insmod "$RNULL_KO" queue_mode=$bad 2>/dev/null; then fail "queue_mode=$bad loaded"; fi
	! rnull_loaded || fail "queue_mode=$bad left rnull loaded"
done
load_rnull queue_mode=02
expect_eq "$(param queue_mode)" 2 "queue_mode=02 (decimal)"
unload_rnull

# virt_boundary: a page's boundary mask; shared_tag_bitmap:
# BLK_MQ_F_TAG_HCTX_SHARED on every hardware queue.
load_rnull virt_boundary=1 shared_tag_bitmap=1 submit_queues=2 poll_queues=0
expect_eq "$(cat /sys/block/rnullb0/queue/virt_boundary_mask)" 4095 "virt_boundary_mask"
for h in $dbg/rnullb0/hctx*; do
	grep -q TAG_HCTX_SHARED "$h/flags" || fail "$h without TAG_HCTX_SHARED: $(cat "$h/flags")"
done
log "hctx flags: $(cat $dbg/rnullb0/hctx0/flags)"
fio_terse --name=s --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=16 --numjobs=2 --size=16m >/dev/null ||
	fail "I/O on a shared tag bitmap"
unload_rnull

# use_per_node_hctx: one hardware queue per online node.
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
[ "$nodes" -gt 0 ] || nodes=1
load_rnull use_per_node_hctx=1 submit_queues=2 poll_queues=0
expect_eq "$(hctxs rnullb0)" "$nodes" "hardware queues with use_per_node_hctx"
unload_rnull

# home_node: -1 or an online node; any other int loads with -1 instead
# and null_blk's message, and shows -1, as null_blk's; not an int is
# refused.
load_rnull home_node=0
expect_eq "$(param home_node)" 0 "home_node=0"
unload_rnull
for bad in 4096 -2 "$nodes"; do
	kmsg_mark
	load_rnull home_node=$bad
	kmsg_since | grep -q "invalid home_node value" || fail "home_node=$bad without null_blk's message"
	expect_eq "$(param home_node)" -1 "home_node after home_node=$bad"
	dd if=/dev/rnullb0 of=/dev/null bs=4k count=16 iflag=direct 2>/dev/null ||
		fail "I/O with home_node=$bad"
	unload_rnull
done
if insmod "$RNULL_KO" home_node=x 2>/dev/null; then fail "home_node=x loaded"; fi
! rnull_loaded || fail "home_node=x left rnull loaded"

# configfs: the same attributes, listed in features.
load_rnull nr_devices=0
for a in queue_mode home_node use_per_node_hctx virt_boundary shared_tag_bitmap; do
	tr ',' '\n' <$cfs/features | grep -qx $a || fail "features lacks $a"
done
mkdir $cfs/a || fail "mkdir"
expect_eq "$(cat $cfs/a/queue_mode)" 2 "configfs queue_mode default"
# null_blk's attribute is unsigned: NUMA_NO_NODE is 4294967295.
expect_eq "$(cat $cfs/a/home_node)" 4294967295 "configfs home_node default"
for w in "queue_mode -1" "queue_mode 4294967296" "home_node -1" "home_node -2" "virt_boundary 2" \
	"shared_tag_bitmap 2" "use_per_node_hctx 2"; do
	set -- $w
	before=$(cat $cfs/a/$1)
	if echo "$2" >$cfs/a/$1 2>/dev/null; then fail "configfs $1=$2 accepted"; fi
	expect_eq "$(cat $cfs/a/$1)" "$before" "configfs $1 after refusing $2"
done
# A node that is not online: power on with NUMA_NO_NODE and null_blk's
# module parameter message (null_blk does not check the directory's).
echo 4096 >$cfs/a/home_node || fail "configfs home_node=4096"
expect_eq "$(cat $cfs/a/home_node)" 4096 "configfs home_node=4096"
kmsg_mark
echo 1 >$cfs/a/power || fail "power=1 with home_node=4096"
kmsg_since | grep -q "invalid home_node value" || fail "configfs home_node=4096 without the message"
expect_eq "$(cat $cfs/a/home_node)" 4294967295 "configfs home_node after power on with 4096"
echo 0 >$cfs/a/power || fail "power=0 after home_node=4096"
echo 0 >$cfs/a/home_node || fail "configfs home_node=0"
# queue_mode is any unsigned int, as null_blk's attribute: 1 is refused
# at power on with null_blk's message, any other but 0 kept, on blk-mq.
echo 1 >$cfs/a/queue_mode || fail "configfs queue_mode=1 write"
kmsg_mark
if echo 1 >$cfs/a/power 2>/dev/null; then fail "power=1 with queue_mode=1"; fi
expect_eq "$(cat $cfs/a/power)" 0 "power after queue_mode=1"
kmsg_since | grep -q "legacy IO path is no longer available$" ||
	fail "configfs queue_mode=1 without null_blk's message"
echo 0x7 >$cfs/a/queue_mode || fail "configfs queue_mode=0x7"
echo 1 >$cfs/a/power || fail "power=1 with queue_mode=7"
expect_eq "$(cat $cfs/a/queue_mode)" 7 "configfs queue_mode after power on with 7"
[ -d /sys/block/rnullb0/mq/0 ] || fail "queue_mode=7 device is not blk-mq"
echo 0 >$cfs/a/power || fail "power=0 after queue_mode=7"
kmsg_mark
echo 0 >$cfs/a/queue_mode || fail "configfs queue_mode=0"
echo 1 >$cfs/a/virt_boundary || fail "configfs virt_boundary=1"
echo 1 >$cfs/a/shared_tag_bitmap || fail "configfs shared_tag_bitmap=1"
echo 1 >$cfs/a/use_per_node_hctx || fail "configfs use_per_node_hctx=1"
echo 2 >$cfs/a/submit_queues || fail "configfs submit_queues=2"
echo 0 >$cfs/a/poll_queues || fail "configfs poll_queues=0"
echo 1 >$cfs/a/power || fail "power=1"
kmsg_since | grep -q "BIO-based IO path is no longer available, using blk-mq instead" ||
	fail "configfs queue_mode=0 without null_blk's message"
expect_eq "$(cat $cfs/a/queue_mode)" 2 "configfs queue_mode after power on with 0"
expect_eq "$(cat $cfs/a/submit_queues)" "$nodes" "configfs submit_queues with use_per_node_hctx"
expect_eq "$(hctxs rnullb0)" "$nodes" "configfs hardware queues with use_per_node_hctx"
expect_eq "$(cat /sys/block/rnullb0/queue/virt_boundary_mask)" 4095 "configfs virt_boundary_mask"
grep -q TAG_HCTX_SHARED $dbg/rnullb0/hctx0/flags || fail "configfs shared_tag_bitmap without TAG_HCTX_SHARED"
for a in queue_mode home_node use_per_node_hctx virt_boundary shared_tag_bitmap; do
	if echo 0 >$cfs/a/$a 2>/dev/null; then fail "configfs $a written while powered on"; fi
done
echo 0 >$cfs/a/power || fail "power=0"
rmdir $cfs/a || fail "rmdir"
unload_rnull

# C null_blk, where the guest has it, does what is copied above.
C_KO=$RNULL_MODDIR/null_blk.ko
if [ -e "$C_KO" ] && [ ! -d /sys/module/null_blk ]; then
	ccfs=/sys/kernel/config/nullb
	trap 'rmdir $ccfs/c 2>/dev/null; rmmod null_blk 2>/dev/null; cleanup_rnull' EXIT
	cparam() { cat "/sys/module/null_blk/parameters/$1"; }
	kmsg_mark
	insmod "$C_KO" nr_devices=2 home_node=4096 queue_mode=0 ||
		fail "C null_blk with home_node=4096 queue_mode=0"
	kmsg_since | grep -q "null_blk: invalid home_node value$" || fail "C null_blk's home_node message"
	expect_eq "$(cparam home_node)" -1 "C null_blk home_node after 4096"
	expect_eq "$(kmsg_since | grep -cF "null_blk: $bio_msg")" 2 "C null_blk queue_mode=0 messages, 2 devices"
	expect_eq "$(cparam queue_mode)" 0 "C null_blk queue_mode after 0"
	mkdir $ccfs/c || fail "C null_blk mkdir"
	expect_eq "$(cat $ccfs/c/home_node)" 4294967295 "C null_blk configfs home_node default"
	echo 0x7 >$ccfs/c/queue_mode || fail "C null_blk configfs queue_mode=0x7"
	if echo -1 >$ccfs/c/home_node 2>/dev/null; then fail "C null_blk configfs home_node=-1 accepted"; fi
	rmdir $ccfs/c || fail "C null_blk rmdir"
	rmmod null_blk || fail "rmmod C null_blk"
	kmsg_mark
	if insmod "$C_KO" nr_devices=0 queue_mode=1 2>/dev/null; then fail "C null_blk queue_mode=1 loaded"; fi
	kmsg_since | grep -q "null_blk: legacy IO path is no longer available$" ||
		fail "C null_blk's queue_mode=1 message"
	for bad in 0x2 3; do
		if insmod "$C_KO" nr_devices=0 queue_mode=$bad 2>/dev/null; then fail "C null_blk queue_mode=$bad loaded"; fi
	done
	[ ! -d /sys/module/null_blk ] || fail "a refused C null_blk stayed loaded"
else
	log "no C null_blk to compare with"
fi
