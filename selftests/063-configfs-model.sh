#!/bin/sh
# rnull's own configfs attributes on the model side: rotational_model=1
# makes a rotational one-queue device (submit_queues clamped with a warning,
# as the parameter), time_slice_us is its queues' initial slice, mbps its
# bandwidth limit; a device without them keeps the defaults.
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/rnull
load_rnull nr_devices=0 submit_queues=2
mkdir $cfs/m $cfs/plain || fail "mkdir"
echo 1 >$cfs/m/rotational_model || fail "rotational_model=1"
echo 250 >$cfs/m/time_slice_us || fail "time_slice_us=250"
echo 64 >$cfs/m/mbps || fail "mbps=64"
echo 1024 >$cfs/m/size || fail "size=1024"
kmsg_mark
echo 1 >$cfs/m/power || fail "power=1 with the model"
kmsg_since | grep -q "rotational_model has one actuator" || log "note: no clamp warning (submit_queues was $(cat $cfs/m/submit_queues))"
expect_eq "$(cat $cfs/m/submit_queues)" 1 "submit_queues shown after the clamp"
expect_eq "$(ls -d /sys/block/rnullb0/mq/* | wc -l)" 1 "hardware queues of the model"
expect_eq "$(cat /sys/block/rnullb0/queue/rotational)" 1 "queue/rotational of the model"
expect_eq "$(cat /sys/block/rnullb0/mq/0/time_slice_us)" 250 "mq/0/time_slice_us"
expect_eq "$(dev_attr 0 mbps)" 64 "rnull/mbps"
# The model serves requests (seek + rotation): a few reads take time.
dd if=/dev/rnullb0 of=/dev/null bs=4096 count=8 iflag=direct 2>/dev/null || fail "read on the model"

echo 1 >$cfs/plain/power || fail "plain: power=1"
expect_eq "$(cat /sys/block/rnullb1/queue/rotational)" 0 "plain: queue/rotational"
expect_eq "$(cat /sys/block/rnullb1/mq/0/time_slice_us)" 0 "plain: time_slice_us"
expect_eq "$(dev_attr 1 mbps)" 0 "plain: mbps"
expect_eq "$(ls -d /sys/block/rnullb1/mq/* | wc -l)" "$(($(cat $cfs/plain/submit_queues) + $(cat $cfs/plain/poll_queues)))" "plain: hardware queues"
rmdir $cfs/m $cfs/plain || fail "rmdir"
unload_rnull
