#!/bin/sh
# configfs devices: rnull loads with nr_devices=0 and no disk; a directory
# under /sys/kernel/config/rnull/ starts from the module parameters;
# power=1 makes rnullbN from its settings (null_blk's names and units),
# fio runs on it, power=0 removes it, power=1 makes it again, rmdir
# removes it and the module unloads.
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/rnull
load_rnull nr_devices=0 hw_queue_depth=48
[ -d $cfs ] || fail "$cfs missing"
n=$(ls /sys/block | grep -c '^rnullb' || true)
expect_eq "$n" 0 "disks with nr_devices=0"

d=$cfs/dev0
mkdir $d || fail "mkdir $d"
expect_eq "$(cat $d/power)" 0 "new directory's power"
expect_eq "$(cat $d/hw_queue_depth)" 48 "default hw_queue_depth (the parameter's)"
expect_eq "$(cat $d/size)" $((250 * 1024)) "default size in MiB (gb=250)"
expect_eq "$(cat $d/index)" -1 "default index (lowest free)"

echo 100 >$d/size || fail "size=100"
echo 4096 >$d/blocksize || fail "blocksize=4096"
echo 32 >$d/hw_queue_depth || fail "hw_queue_depth=32"
echo 1 >$d/rotational || fail "rotational=1"
echo 1 >$d/memory_backed || fail "memory_backed=1"
echo 8 >$d/cache_size || fail "cache_size=8"
echo 1 >$d/discard || fail "discard=1"
echo 0 >$d/fua || fail "fua=0"
echo 1 >$d/no_sched || fail "no_sched=1"
echo 128 >$d/max_sectors || fail "max_sectors=128"
echo 2 >$d/irqmode || fail "irqmode=2"
echo 5000 >$d/completion_nsec || fail "completion_nsec=5000"
[ ! -e /dev/rnullb0 ] || fail "rnullb0 exists before power=1"

echo 1 >$d/power || fail "power=1"
expect_eq "$(cat $d/power)" 1 "power after power=1"
expect_eq "$(cat $d/index)" 0 "index taken"
[ -b /dev/rnullb0 ] || fail "/dev/rnullb0 missing after power=1"
q=/sys/block/rnullb0/queue
expect_eq "$(cat /sys/block/rnullb0/size)" $((100 << 11)) "size in sectors (100 MiB)"
expect_eq "$(cat $q/logical_block_size)" 4096 "queue/logical_block_size"
expect_eq "$(cat $q/nr_requests)" 32 "queue/nr_requests"
expect_eq "$(cat $q/rotational)" 1 "queue/rotational"
expect_eq "$(cat $q/max_hw_sectors_kb)" 64 "queue/max_hw_sectors_kb"
expect_eq "$(cat $q/write_cache)" "write back" "memory-backed write cache (cache_size=8)"
expect_eq "$(cat $q/fua)" 0 "queue/fua with fua=0"
expect_eq "$(cat $q/scheduler)" none "queue/scheduler with no_sched=1"
[ "$(cat $q/discard_max_hw_bytes)" -gt 0 ] || fail "discard=1 without discard"
expect_eq "$(dev_attr 0 size)" 100 "rnull/size"
expect_eq "$(dev_attr 0 irqmode)" "2 (timer)" "rnull/irqmode"
expect_eq "$(dev_attr 0 completion_nsec)" 5000 "rnull/completion_nsec"

out=$(fio_terse --name=cfs --filename=/dev/rnullb0 --direct=1 --rw=randrw \
	--bs=4k --ioengine=io_uring --iodepth=8 --verify=crc32c --size=8M) ||
	fail "fio failed on the configfs device"
expect_eq "$(echo "$out" | terse_field 5)" 0 "fio error"
log "fio verify on rnullb0: $(echo "$out" | terse_field 6) KiB read"

echo 0 >$d/power || fail "power=0"
expect_eq "$(cat $d/power)" 0 "power after power=0"
[ ! -e /sys/block/rnullb0 ] || fail "rnullb0 still there after power=0"
echo 0 >$d/power || fail "power=0 twice"

# Settings change again once off; the device comes back with them.
echo 0 >$d/fua || fail "fua=0 after power=0"
echo 1 >$d/fua || fail "fua=1 after power=0"
echo 0 >$d/no_sched || fail "no_sched=0 after power=0"
echo 1 >$d/power || fail "power=1 again"
expect_eq "$(cat $q/fua)" 1 "queue/fua with fua=1"
case "$(cat $q/scheduler)" in "[none]"*) ;; *) fail "no_sched=0: scheduler '$(cat $q/scheduler)'" ;; esac
dd if=/dev/rnullb0 of=/dev/null bs=4096 count=16 iflag=direct 2>/dev/null || fail "read after power cycle"

rmdir $d || fail "rmdir of a powered directory"
[ ! -e /sys/block/rnullb0 ] || fail "rnullb0 still there after rmdir"
unload_rnull
