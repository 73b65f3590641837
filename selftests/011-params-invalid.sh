#!/bin/sh
# Invalid values for every parameter fail the load with EINVAL, log a line
# naming the parameter, and leave nothing behind.
. "$(dirname "$0")/lib.sh"

bad="nr_devices=65 nr_devices=-1 nr_devices=abc nr_devices=1x
submit_queues=0 submit_queues=257 submit_queues=
poll_queues=-1 poll_queues=257 poll_queues=two
hw_queue_depth=0 hw_queue_depth=4097 hw_queue_depth=99999999999999999999
bs=256 bs=1000 bs=8192 bs=4k
gb=0 gb=16385 gb=-5
irqmode=3 irqmode=-1 irqmode=soft
completion_nsec=-1 completion_nsec=1000000001
memory_backed=2 memory_backed=yes
cache_size=-1 cache_size=16777217 cache_size=1M
shared_tags=2 shared_tags=-1
blocking=2 blocking=on
rotational=2 rotational=x
max_sectors=7 max_sectors=65536
host_queue_depth=-1 host_queue_depth=1025
tag_policy=bogus tag_policy= tag_policy=FAIR
borrow_expiry_us=-1 borrow_expiry_us=10000001"

tried=0
for arg in $bad; do
	name=${arg%%=*}
	kmsg_mark
	if insmod "$RNULL_KO" "$arg" 2>/tmp/insmod.err; then
		fail "insmod rnull $arg was accepted"
	fi
	grep -q "Invalid argument" /tmp/insmod.err || fail "insmod rnull $arg: not EINVAL: $(cat /tmp/insmod.err)"
	kmsg_since | grep -q "parameter $name: must be" || fail "no log line naming $name for $arg"
	! rnull_loaded || fail "rnull loaded after $arg"
	[ ! -e /sys/block/rnullb0 ] || fail "rnullb0 left behind after $arg"
	tried=$((tried + 1))
done
log "$tried invalid values refused"

# The module still loads fine afterwards.
load_rnull
unload_rnull
