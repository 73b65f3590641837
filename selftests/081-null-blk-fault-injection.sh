#!/bin/sh
# null_blk's fault injection on a kernel that has it: the module
# parameters timeout, requeue and init_hctx in the kernel's
# <interval>,<probability>,<space>,<times> form, and each configfs
# device's timeout_inject/, requeue_inject/ and init_hctx_fault_inject/.
# A timed-out request is ended by blk-mq's timeout and the I/O after it
# goes on; requeued requests lose no data; a failed init_hctx fails the
# device's creation and leaves a resize with the queues it had. The
# block layer's io-timeout-fail is honoured as null_blk's.
. "$(dirname "$0")/lib.sh"

# lost_read WHAT: one direct read of rnullb0, which WHAT picks and loses: it
# fails, and only once blk-mq's request timeout (1 s or more) has run.
lost_read() {
	t0=$(date +%s)
	if dd if=/dev/rnullb0 of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null; then
		fail "the read picked by $1 succeeded"
	fi
	secs=$(($(date +%s) - t0))
	[ "$secs" -ge 1 ] || fail "the read picked by $1 failed after ${secs}s, before rq_timeout_ms"
}

cfs=/sys/kernel/config/rnull
load_rnull nr_devices=0
if [ ! -e /sys/module/rnull/parameters/timeout ]; then
	unload_rnull
	skip "the kernel has no fault injection (CONFIG_FAULT_INJECTION, CONFIG_FAULT_INJECTION_CONFIGFS)"
fi
mkdir $cfs/f || fail "mkdir"
for g in timeout_inject requeue_inject init_hctx_fault_inject; do
	[ -d $cfs/f/$g ] || fail "no $g/ in a device directory"
	expect_eq "$(cat $cfs/f/$g/probability)" 0 "$g/probability without the parameter"
done
! tr ',' '\n' <$cfs/features | grep -q _inject || fail "features lists a fault injection group"
rmdir $cfs/f || fail "rmdir with the fault injection groups"
unload_rnull

# timeout=1,100,0,1: the first request (the partition scan's read) is left
# for blk-mq's timeout, which ends it; the I/O after it is served.
t0=$(date +%s)
load_rnull timeout=1,100,0,1 rq_timeout_ms=1000
expect_eq "$(cat /sys/module/rnull/parameters/timeout)" "1,100,0,1" "parameter timeout"
expect_eq "$(dev_attr 0 injected_timeouts)" 1 "timeouts injected by timeout=1,100,0,1"
dd if=/dev/rnullb0 of=/dev/null bs=4k count=64 iflag=direct 2>/dev/null ||
	fail "I/O after the timed-out request"
expect_eq "$(dev_attr 0 injected_timeouts)" 1 "timeouts after times=1 ran out"
log "load and I/O took $(($(date +%s) - t0)) s"
unload_rnull

# A parameter shows the string given, as C null_blk's module_param_string()
# (setup_fault_attr() reads its four numbers and ignores the rest).
v=010,20,0,-1,more
load_rnull nr_devices=0 requeue=$v
shown=$(cat /sys/module/rnull/parameters/requeue)
unload_rnull
expect_eq "$shown" "$v" "parameter requeue=$v"
C_KO=$RNULL_MODDIR/null_blk.ko
if [ -e "$C_KO" ] && insmod "$C_KO" nr_devices=0 requeue=$v 2>/dev/null; then
	c_shown=$(cat /sys/module/null_blk/parameters/requeue)
	rmmod null_blk || fail "rmmod C null_blk"
	expect_eq "$shown" "$c_shown" "requeue=$v as C null_blk shows it"
else
	log "C null_blk without fault injection: not compared"
fi

# The configfs group, changed on a running device: one read times out and
# fails (blk-mq's timeout, after rq_timeout_ms), the next is served.
load_rnull nr_devices=0 rq_timeout_ms=1000
mkdir $cfs/f || fail "mkdir"
echo 1 >$cfs/f/power || fail "power=1"
echo 0 >$cfs/f/timeout_inject/verbose || fail "timeout_inject/verbose"
echo 1 >$cfs/f/timeout_inject/times || fail "timeout_inject/times"
echo 100 >$cfs/f/timeout_inject/probability || fail "timeout_inject/probability"
lost_read timeout_inject
expect_eq "$(dev_attr 0 injected_timeouts)" 1 "timeouts injected through timeout_inject/"
expect_eq "$(cat $cfs/f/timeout_inject/times)" 0 "timeout_inject/times after its fault"
dd if=/dev/rnullb0 of=/dev/null bs=4k count=64 iflag=direct 2>/dev/null ||
	fail "I/O after timeout_inject ran out"

# requeue_inject: requeued requests complete, data intact.
echo 0 >$cfs/f/power || fail "power=0"
echo 1 >$cfs/f/memory_backed || fail "memory_backed=1"
echo 64 >$cfs/f/size || fail "size=64"
echo 1 >$cfs/f/power || fail "power=1 memory_backed"
echo 0 >$cfs/f/requeue_inject/verbose || fail "requeue_inject/verbose"
echo -1 >$cfs/f/requeue_inject/times || fail "requeue_inject/times"
echo 30 >$cfs/f/requeue_inject/probability || fail "requeue_inject/probability"
out=$(fio_terse --name=rq --filename=/dev/rnullb0 --direct=1 --rw=randwrite --bs=4k \
	--ioengine=io_uring --iodepth=8 --size=4m --verify=crc32c --do_verify=1) ||
	fail "fio verify failed with requeue_inject"
expect_eq "$(echo "$out" | terse_field 5)" 0 "fio error status with requeue_inject"
requeues=$(dev_attr 0 injected_requeues)
log "injected requeues: $requeues"
[ "$requeues" -gt 0 ] || fail "no requeue injected at 30%"
echo 0 >$cfs/f/requeue_inject/probability || fail "requeue_inject/probability=0"
echo 0 >$cfs/f/power || fail "power=0"

# init_hctx_fault_inject: the power on whose init_hctx fails fails, the
# next one (times ran out) succeeds.
echo 0 >$cfs/f/init_hctx_fault_inject/verbose || fail "init_hctx_fault_inject/verbose"
echo 1 >$cfs/f/init_hctx_fault_inject/times || fail "init_hctx_fault_inject/times"
echo 100 >$cfs/f/init_hctx_fault_inject/probability || fail "init_hctx_fault_inject/probability"
if echo 1 >$cfs/f/power 2>/dev/null; then fail "power=1 with a failing init_hctx"; fi
expect_eq "$(cat $cfs/f/power)" 0 "power after a failed init_hctx"
[ ! -e /sys/block/rnullb0 ] || fail "rnullb0 left behind by a failed init_hctx"
echo 1 >$cfs/f/power || fail "power=1 after init_hctx_fault_inject ran out"
dd if=/dev/rnullb0 of=/dev/null bs=4k count=16 iflag=direct 2>/dev/null || fail "I/O after power on"
# A resize whose new context fails keeps the queues it had (block/030).
if [ "$(nproc)" -ge 2 ]; then
	echo 1 >$cfs/f/init_hctx_fault_inject/times || fail "init_hctx_fault_inject/times"
	if echo 2 >$cfs/f/submit_queues 2>/dev/null; then fail "resize with a failing init_hctx"; fi
	expect_eq "$(cat $cfs/f/submit_queues)" 1 "submit_queues after a failed resize"
	dd if=/dev/rnullb0 of=/dev/null bs=4k count=16 iflag=direct 2>/dev/null ||
		fail "I/O after a failed resize"
	echo 2 >$cfs/f/submit_queues || fail "resize after init_hctx_fault_inject ran out"
fi
rmdir $cfs/f || fail "rmdir"
unload_rnull

# init_hctx=1,100,0,1: the load-time device's creation fails, so the load.
if insmod "$RNULL_KO" init_hctx=1,100,0,1 2>/dev/null; then fail "loaded with a failing init_hctx"; fi
! rnull_loaded || fail "a failed init_hctx left rnull loaded"

# Bad values: refused with EINVAL (ENOSPC past null_blk's 79 characters),
# naming the parameter and its form.
for p in timeout requeue init_hctx; do
	for bad in garbage 1,2,3 ',,,'; do
		kmsg_mark
		err=$(insmod "$RNULL_KO" "$p=$bad" 2>&1) && fail "$p=$bad loaded"
		! rnull_loaded || fail "$p=$bad left rnull loaded"
		echo "$err" | grep -q "Invalid argument" || fail "$p=$bad refused otherwise: $err"
		kmsg_since | grep -q "parameter $p: must be <interval>,<probability>,<space>,<times>" ||
			fail "$p=$bad logged no line naming it and its form"
	done
	long=1,1,0,1$(printf '%080d' 0)
	err=$(insmod "$RNULL_KO" "$p=$long" 2>&1) && fail "$p=<80 characters> loaded"
	echo "$err" | grep -q "No space left on device" || fail "$p=<80 characters> refused otherwise: $err"
done

# The block layer's io-timeout-fail (CONFIG_FAIL_IO_TIMEOUT), which
# null_blk's queue_rq honours (blk_should_fake_timeout()): the read it
# picks is left for blk-mq's timeout and fails, the next is served.
fit=/sys/kernel/debug/fail_io_timeout
[ -d /sys/kernel/debug/block ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ -d $fit ]; then
	load_rnull rq_timeout_ms=1000
	iof=/sys/block/rnullb0/io-timeout-fail
	[ -e $iof ] || fail "no $iof beside $fit"
	for f in "verbose 0" "interval 1" "times 1" "probability 100"; do
		set -- $f
		echo "$2" >$fit/$1 || fail "fail_io_timeout/$1=$2"
	done
	echo 1 >$iof || fail "io-timeout-fail=1"
	lost_read io-timeout-fail
	expect_eq "$(cat $fit/times)" 0 "fail_io_timeout/times after its fault"
	expect_eq "$(dev_attr 0 injected_timeouts)" 1 "timeouts left by io-timeout-fail"
	dd if=/dev/rnullb0 of=/dev/null bs=4k count=64 iflag=direct 2>/dev/null ||
		fail "I/O after fail_io_timeout ran out"
	echo 0 >$iof || fail "io-timeout-fail=0"
	echo 0 >$fit/probability || fail "fail_io_timeout/probability=0"
	unload_rnull
else
	log "no $fit (CONFIG_FAIL_IO_TIMEOUT, CONFIG_FAULT_INJECTION_DEBUG_FS): io-timeout-fail not tested"
fi
