#!/bin/sh
# submit_queues and poll_queues of a powered-on configfs device change its
# hardware queues (blk_mq_update_nr_hw_queues, null_blk's exception to the
# EBUSY rule): the mq directories, their time_slice_us files and
# rnull/submit_queues, poll_queues follow; I/O (plain and polled, with and
# without a host budget) goes on across changes made under it; values the
# device cannot take are refused with EINVAL and a log line, and change
# nothing.
. "$(dirname "$0")/lib.sh"

requires_cpus 2
cfs=/sys/kernel/config/rnull
nr_hctx() { ls -d /sys/block/rnullb0/mq/* | wc -l; }
# shape SUBMIT POLL: what the directory, the device and blk-mq show.
shape() {
	expect_eq "$(cat $d/submit_queues)/$(cat $d/poll_queues)" "$1/$2" "configfs submit/poll queues"
	expect_eq "$(dev_attr 0 submit_queues)/$(dev_attr 0 poll_queues)" "$1/$2" "rnull/ submit/poll queues"
	expect_eq "$(nr_hctx)" $(($1 + $2)) "mq directories"
	for m in /sys/block/rnullb0/mq/*; do
		[ -e "$m/time_slice_us" ] || fail "$m has no time_slice_us"
	done
}
# refused ATTR VALUE WHY: EINVAL, a log line, nothing changed.
refused() {
	before="$(cat $d/submit_queues)/$(cat $d/poll_queues)/$(nr_hctx)"
	kmsg_mark
	if echo "$2" >$d/$1 2>/tmp/err; then fail "$1=$2 accepted: $3"; fi
	grep -q "Invalid argument" /tmp/err || fail "$1=$2: not EINVAL: $(cat /tmp/err)"
	kmsg_since | grep -q "for configfs rnull/$(basename $d)/$1 while powered on: $3" ||
		fail "$1=$2: no log line saying '$3'"
	expect_eq "$(cat $d/submit_queues)/$(cat $d/poll_queues)/$(nr_hctx)" "$before" "after $1=$2"
}
polled() { cat /sys/block/rnullb0/rnull/polled; }

cpus=$(nproc)
load_rnull nr_devices=0 host_queue_depth=8
d=$cfs/live
mkdir $d || fail "mkdir"
echo 1 >$d/submit_queues && echo 1 >$d/poll_queues && echo 0 >$d/host_tags && echo 1 >$d/power ||
	fail "power on with 1 + 1 queues"
shape 1 1
echo 123 >/sys/block/rnullb0/mq/0/time_slice_us || fail "time_slice_us"

echo 2 >$d/submit_queues || fail "submit_queues=2 live"
shape 2 1
expect_eq "$(cat /sys/block/rnullb0/mq/0/time_slice_us)" 123 "mq/0/time_slice_us kept"
echo 2 >$d/poll_queues || fail "poll_queues=2 live"
shape 2 2
expect_eq "$(cat /sys/block/rnullb0/queue/io_poll)" 1 "queue/io_poll with 2 poll queues"
p0=$(polled)
fio_terse --name=p --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k --ioengine=io_uring \
	--hipri=1 --iodepth=8 --number_ios=2000 >/dev/null || fail "polled I/O after growing"
[ "$(polled)" -ge $((p0 + 2000)) ] || fail "polled I/O after growing was not polled"
echo 0 >$d/poll_queues || fail "poll_queues=0 live"
shape 2 0
expect_eq "$(cat /sys/block/rnullb0/queue/io_poll)" 0 "queue/io_poll without poll queues"
echo 1 >$d/poll_queues && echo 1 >$d/submit_queues || fail "back to 1 + 1"
shape 1 1

# Changes under I/O, plain and polled: every request completes, no error.
fio_terse --name=plain --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=16 --numjobs=2 --group_reporting --time_based --runtime=4 >/tmp/plain.out &
fio_terse --name=poll --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --hipri=1 --iodepth=8 --time_based --runtime=4 >/tmp/poll.out &
n=0
while [ $n -lt 12 ]; do
	echo $((n % 2 + 1)) >$d/submit_queues || fail "submit_queues under I/O"
	echo $(((n + 1) % 2 + 1)) >$d/poll_queues || fail "poll_queues under I/O"
	n=$((n + 1))
	sleep 0.2
done
wait
for f in /tmp/plain.out /tmp/poll.out; do
	expect_eq "$(terse_field 5 <$f)" 0 "fio error in $(basename $f .out) under changes"
done
log "$n changes under I/O: $(terse_field 6 <$f) KiB polled"

# What the device cannot take.
refused submit_queues $((cpus + 1)) "more than the possible CPUs"
refused poll_queues $((cpus + 1)) "more than the possible CPUs"
echo 0 >$d/power && echo 0 >$d/poll_queues && echo 1 >$d/power || fail "power on without poll queues"
refused poll_queues 1 "the device was made without poll queues"
echo 2 >$d/submit_queues || fail "submit_queues=2 without poll queues"
shape 2 0
echo 0 >$d/power || fail "power=0"
# Powered off, the same values are settings again (clamped at power on).
echo $((cpus + 1)) >$d/submit_queues || fail "submit_queues=$((cpus + 1)) while off"
echo 1 >$d/submit_queues && echo 1 >$d/poll_queues || fail "settings while off"

# In the host budget, with requests waiting for its tags (iodepth 16 over
# a budget of 8): the queue is frozen with its waiters still woken.
echo 1 >$d/host_tags && echo 1 >$d/power || fail "power on in the host budget"
fio_terse --name=budget --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=16 --time_based --runtime=3 >/tmp/budget.out &
n=0
while [ $n -lt 8 ]; do
	echo $((n % 2 + 1)) >$d/submit_queues || fail "submit_queues in the budget"
	n=$((n + 1))
	sleep 0.2
done
wait
expect_eq "$(terse_field 5 </tmp/budget.out)" 0 "fio error in the budget under changes"
expect_eq "$(dev_attr 0 tags_in_flight)" 0 "host tags in flight after I/O"
echo 0 >$d/power || fail "power=0"

# On the module-wide tag set, or with the model: refused.
echo 0 >$d/host_tags && echo 1 >$d/shared_tags && echo 1 >$d/submit_queues && echo 1 >$d/power ||
	fail "shared_tags device"
refused submit_queues 2 "the device is on the module-wide tag set"
echo 0 >$d/power && echo 0 >$d/shared_tags && echo 1 >$d/rotational_model && echo 1 >$d/power ||
	fail "model device"
refused submit_queues 2 "rotational_model has one actuator"
rmdir $d || fail "rmdir"
unload_rnull
