#!/bin/sh
# A rotational model too slow for the request timeout does not hold its
# requests for ever: one blk-mq's timeout has expired on more than twice
# fails with ETIMEDOUT, and while the device is being removed (power=0 of
# a busy configfs device, whose del_gendisk waits for every request) the
# model gives up what it holds at the next expiry, so the removal takes
# about a timeout, not the model's whole queue.
. "$(dirname "$0")/lib.sh"

cfs=/sys/kernel/config/rnull
dev=/dev/rnullb0
# Reads in flight on rnullb0 (the first field of its inflight file).
inflight() { set -- $(cat /sys/block/rnullb0/inflight); echo "$1"; }
# now: seconds since boot.
now() { cut -d' ' -f1 /proc/uptime | cut -d. -f1; }

# A drive of 1 MB/s with seeks of 0.1 to 1 s, one command at a time and
# no read cache to speak of: a 1 MiB random read takes 1 to 2 s, so a
# queue of 16 takes 16 to 30 s, against a 1 s request timeout.
load_rnull nr_devices=0 rq_timeout_ms=1000 media_mbps=1 bus_mbps=1 \
	seek_min_us=100000 seek_max_us=1000000 ncq_depth=1 cache_segments=1 \
	segment_kib=4 readahead_min_kib=0
mkdir $cfs/w || fail "mkdir"
echo 1 >$cfs/w/rotational_model && echo 1 >$cfs/w/power || fail "power=1 with the model"
[ -b $dev ] || fail "no $dev"

# Timed out in the model: random 1 MiB reads, 16 at a time, for 4 s.
# Without a bound every one completes, the last ones after some 20 s;
# with it those kept through three timeouts fail (blk-mq logs each), and
# fio is done well before the queue could drain.
# A mark in the kernel log (lib.sh's line count would miss lines once the
# log buffer is full, as it is after many tests in one boot).
mark="rnull selftest 100: slow reads from $(now)"
echo "$mark" >/dev/kmsg
t0=$(now)
fio --name=slow --filename=$dev --direct=1 --ioengine=libaio --rw=randread --bs=1m \
	--iodepth=16 --time_based --runtime=4 --continue_on_error=all >/tmp/slow.out 2>&1
t1=$(now)
timeouts=$(dmesg | sed -n "/$mark/,\$p" | grep -c "timeout error, dev rnullb0")
log "16 slow reads at a time for 4 s: $timeouts timed out, $((t1 - t0)) s"
[ "$timeouts" -gt 0 ] || fail "no read timed out in a model 20 times too slow: $(tail -n 5 /tmp/slow.out)"
[ $((t1 - t0)) -le 25 ] || fail "fio took $((t1 - t0)) s: requests kept well past their timeouts"
expect_eq "$(inflight)" 0 "reads in flight after fio"
# The drive serves again.
dd if=$dev of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null || fail "a read after the timeouts"

# Removed while busy: power=0 waits for the model's queue (del_gendisk).
fio --name=busy --filename=$dev --direct=1 --ioengine=libaio --rw=randread --bs=1m \
	--iodepth=16 --time_based --runtime=60 --continue_on_error=all >/tmp/busy.out 2>&1 &
fio_pid=$!
n=0
until [ "$(inflight)" -ge 16 ]; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "fio did not fill the queue: $(inflight) in flight"
	sleep 0.1
done
t0=$(now)
(echo 0 >$cfs/w/power && echo done >/tmp/power.rc || echo failed >/tmp/power.rc) &
off_pid=$!
n=0
while [ ! -s /tmp/power.rc ] && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
t1=$(now)
[ -s /tmp/power.rc ] || {
	log "power=0 still waiting after $((t1 - t0)) s; letting it finish"
	wait $off_pid
	fail "power=0 of a busy model took $(($(now) - t0)) s: its requests were kept"
}
expect_eq "$(cat /tmp/power.rc)" done "power=0 of the busy model"
log "power=0 with 16 slow reads in the model took $((t1 - t0)) s"
wait $fio_pid
[ ! -e /sys/block/rnullb0 ] || fail "rnullb0 still there after power=0"
rmdir $cfs/w || fail "rmdir"
unload_rnull
