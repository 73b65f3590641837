#!/bin/sh
# Poll queues (null_blk's poll_queues): the device gets poll hardware queues
# after its submit queues, reports polling (queue/io_poll), and polled
# I/O (fio io_uring --hipri) completes only through the driver's poll
# callback: every read of a polled run is counted by rnull/polled, in
# every irqmode, with data verified on a memory-backed device and with a
# bandwidth limit holding completions back. Without poll queues nothing
# is polled. configfs devices, the shared tag set and the rotational model
# follow the same setting.
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/rnull
reads() { set -- $(cat "/sys/block/$1/stat"); echo "$1"; }
nr_hctx() { ls -d "/sys/block/$1/mq/"* | wc -l; }

# polled_run DEV WHAT [fio args]: a polled random read run; every read it
# made was ended by poll.
polled_run() {
	dev=$1
	what=$2
	shift 2
	r0=$(reads "$dev")
	p0=$(cat "/sys/block/$dev/rnull/polled")
	out=$(fio_terse --name=poll --filename="/dev/$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=io_uring --hipri=1 --iodepth=16 --time_based \
		--runtime=1 "$@") || fail "$what: polled fio failed"
	expect_eq "$(echo "$out" | terse_field 5)" 0 "$what: fio error"
	# Terse v3 field 6: KiB read.
	kib=$(echo "$out" | terse_field 6)
	[ "$kib" -gt 0 ] || fail "$what: no polled read"
	dr=$(($(reads "$dev") - r0))
	dp=$(($(cat "/sys/block/$dev/rnull/polled") - p0))
	log "$what: fio read $kib KiB, device $dr reads, $dp ended by poll"
	[ "$dr" -gt 0 ] || fail "$what: the device saw no read"
	expect_eq "$dp" "$dr" "$what: reads ended by poll"
}

# A poll queue after one submit queue, in each completion mode: the mode
# applies to the submit queue only.
for mode in 0 1 2; do
	load_rnull submit_queues=1 poll_queues=1 irqmode=$mode
	expect_eq "$(dev_attr 0 poll_queues)" 1 "rnull/poll_queues"
	expect_eq "$(nr_hctx rnullb0)" 2 "hardware queues: 1 submit + 1 poll"
	expect_eq "$(cat /sys/block/rnullb0/queue/io_poll)" 1 "queue/io_poll"
	# blk-mq maps every CPU to the poll queue too.
	[ -n "$(cat /sys/block/rnullb0/mq/1/cpu_list)" ] || fail "poll queue mq/1 has no CPU"
	polled_run rnullb0 "irqmode=$mode"
	# Non-polled I/O still completes on the submit queue, not by poll.
	p0=$(dev_attr 0 polled)
	dd if=/dev/rnullb0 of=/dev/null bs=4k count=256 iflag=direct 2>/dev/null || fail "plain read"
	expect_eq "$(dev_attr 0 polled)" "$p0" "irqmode=$mode: plain reads ended by poll"
	unload_rnull
done

# The default, as null_blk's: one poll queue.
load_rnull
expect_eq "$(dev_attr 0 poll_queues)" 1 "default poll_queues"
expect_eq "$(nr_hctx rnullb0)" "$(($(dev_attr 0 submit_queues) + 1))" "default hardware queues"
unload_rnull

# No poll queues: no polling. io_uring's polled reads are refused
# (EOPNOTSUPP) and nothing is ended by poll.
load_rnull poll_queues=0
expect_eq "$(nr_hctx rnullb0)" "$(dev_attr 0 submit_queues)" "hardware queues without poll queues"
expect_eq "$(cat /sys/block/rnullb0/queue/io_poll)" 0 "queue/io_poll without poll queues"
if fio --name=nopoll --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --hipri=1 --iodepth=4 --number_ios=64 >/tmp/nopoll.out 2>&1; then
	grep -q "err= 0" /tmp/nopoll.out && fail "polled reads succeeded without poll queues"
fi
expect_eq "$(dev_attr 0 polled)" 0 "ended by poll without poll queues"
unload_rnull

# As many poll queues as CPUs, all of them used; more are clamped.
cpus=$(nproc)
kmsg_mark
load_rnull submit_queues=1 poll_queues=$((cpus + 1))
kmsg_since | grep -q "poll_queues=$((cpus + 1)) is more than the $cpus possible CPUs" ||
	fail "no clamp warning for poll_queues"
expect_eq "$(dev_attr 0 poll_queues)" "$cpus" "poll_queues clamped"
expect_eq "$(nr_hctx rnullb0)" $((cpus + 1)) "hardware queues with $cpus poll queues"
polled_run rnullb0 "$cpus poll queues, $cpus jobs" --numjobs="$cpus" --group_reporting
unload_rnull

# Data through the poll queues: writes and verified reads, memory backed.
load_rnull memory_backed=1 gb=1 poll_queues=1
out=$(fio_terse --name=pverify --filename=/dev/rnullb0 --direct=1 --ioengine=io_uring \
	--hipri=1 --iodepth=8 --rw=randwrite --bsrange=512-64k --size=16M \
	--verify=crc32c --do_verify=1) || fail "polled verify failed"
expect_eq "$(echo "$out" | terse_field 5)" 0 "polled verify error"
[ "$(dev_attr 0 polled)" -gt 0 ] || fail "verify run was not polled"
unload_rnull

# A bandwidth limit holds polled completions back: a 256 KiB read at
# 16 MiB/s takes 15.6 ms however fast its submitter polls. (256 KiB: the
# block layer stops polling a bio it has to split, and 1 MiB is more than
# the default 128 segments.)
load_rnull mbps=16 poll_queues=1
out=$(fio_terse --name=pbw --filename=/dev/rnullb0 --direct=1 --ioengine=io_uring \
	--hipri=1 --iodepth=1 --rw=randread --bs=256k --number_ios=8) || fail "polled fio under mbps failed"
# Terse v3 field 38: minimum total read latency in usec.
min_us=$(echo "$out" | terse_field 38)
log "256 KiB polled reads at mbps=16: min latency ${min_us}us"
[ "$min_us" -ge 15000 ] || fail "a polled 256 KiB read beat the 16 MiB/s limit (${min_us}us)"
expect_eq "$(dev_attr 0 polled)" 8 "mbps run: reads ended by poll"
unload_rnull

# configfs: poll_queues per device, clamped at power on as the parameter.
load_rnull nr_devices=0 poll_queues=0
mkdir $cfs/p || fail "mkdir"
expect_eq "$(cat $cfs/p/poll_queues)" 0 "configfs poll_queues from the parameter"
echo 1 >$cfs/p/submit_queues || fail "submit_queues=1"
echo $((cpus + 5)) >$cfs/p/poll_queues || fail "poll_queues=$((cpus + 5))"
echo 1 >$cfs/p/power || fail "power=1"
expect_eq "$(cat $cfs/p/poll_queues)" "$cpus" "configfs poll_queues clamped at power on"
expect_eq "$(nr_hctx rnullb0)" $((cpus + 1)) "configfs device hardware queues"
expect_eq "$(cat /sys/block/rnullb0/queue/io_poll)" 1 "configfs device queue/io_poll"
polled_run rnullb0 "configfs device"
echo 0 >$cfs/p/power || fail "power=0"
rmdir $cfs/p || fail "rmdir"
unload_rnull

# The module-wide tag set has the parameter's poll queues; a shared_tags
# device asking for others is refused at power on.
load_rnull nr_devices=2 shared_tags=1 submit_queues=1 poll_queues=1
for i in 0 1; do
	expect_eq "$(cat /sys/block/rnullb$i/queue/io_poll)" 1 "shared tag set: rnullb$i io_poll"
done
polled_run rnullb1 "shared tag set"
mkdir $cfs/s || fail "mkdir"
echo 1 >$cfs/s/shared_tags && echo 0 >$cfs/s/poll_queues || fail "shared_tags=1 poll_queues=0"
kmsg_mark
if echo 1 >$cfs/s/power 2>/dev/null; then fail "shared_tags device with other poll_queues powered on"; fi
kmsg_since | grep -q "poll_queues=1.*poll_queues=0" || fail "no log line for the poll_queues mismatch"
rmdir $cfs/s || fail "rmdir"
unload_rnull

# The rotational model has one actuator and no poll queue.
kmsg_mark
load_rnull rotational_model=1 poll_queues=1
expect_eq "$(dev_attr 0 poll_queues)" 0 "model: poll_queues"
expect_eq "$(nr_hctx rnullb0)" 1 "model: hardware queues"
kmsg_since | grep -q "no poll queues: using poll_queues=0" || fail "model: no log line for poll_queues"
unload_rnull
