#!/bin/sh
# A poller that stops polling (null_blk's null_timeout_rq on a poll
# queue): reads parked on a poll queue of a device with a 1 s request
# timeout are ended by blk-mq's timeout with a timeout error (ETIMEDOUT
# to io_uring, "timeout error" in the log) instead of waiting for a poll
# forever, and powering a configfs device off under such reads finishes.
# A timed-out partial read (bad blocks) leaves nothing behind for the
# next request of its slot.
. "$(dirname "$0")/lib.sh"

requires_file /usr/bin/poll-stall
cfs=/sys/kernel/config/rnull
# Reads in flight on DEV (the first field of its inflight file).
inflight() { set -- $(cat "/sys/block/$1/inflight"); echo "$1"; }

# timed_out DEV WHAT: waits until DEV has no request in flight (the timeout
# ended them), failing after 10 s; sets $n to the tenths of a second waited.
timed_out() {
	n=0
	while [ "$(inflight "$1")" -ne 0 ]; do
		n=$((n + 1))
		[ $n -lt 100 ] || fail "$2 not timed out after 10 s ($(inflight "$1") in flight)"
		sleep 0.1
	done
}

# stall DEV OUT: starts poll-stall with 8 reads of DEV that it does not
# poll for 60 s (or until SIGUSR1), output to OUT; waits until they are
# submitted. Sets $pid.
stall() {
	poll-stall "/dev/$1" 8 60 >"$2" 2>&1 &
	pid=$!
	n=0
	until grep -q "^submitted 8" "$2" 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 100 ] || fail "poll-stall did not submit: $(cat "$2")"
		sleep 0.1
	done
}

# reaped OUT WHAT: wakes poll-stall, which reaps; every one of its $count
# (8) reads ended with ETIMEDOUT (-110).
count=8
reaped() {
	kill -USR1 "$pid"
	wait "$pid" || fail "$2: poll-stall failed: $(cat "$1")"
	expect_eq "$(grep -c '^res -110$' "$1")" "$count" "$2: reads ended with ETIMEDOUT"
}

# On a load-time device: the timeout ends the parked reads while the
# device lives, within a few request timeouts (blk-mq rounds its timer
# up to a second).
kmsg_mark
load_rnull submit_queues=1 poll_queues=1 rq_timeout_ms=1000
stall rnullb0 /tmp/stall1
expect_eq "$(inflight rnullb0)" 8 "parked reads in flight"
timed_out rnullb0 "parked reads"
log "parked reads timed out after about $((n / 10)) s"
kmsg_since | grep -q "timeout error, dev rnullb0" || fail "no timeout error in the log"
reaped /tmp/stall1 "load-time device"
unload_rnull

# power=0 under parked reads: del_gendisk's queue freeze waits for them,
# and the timeout ends them.
load_rnull nr_devices=0 submit_queues=1 poll_queues=1 rq_timeout_ms=1000
mkdir $cfs/p || fail "mkdir"
echo 1 >$cfs/p/poll_queues && echo 1 >$cfs/p/power || fail "power=1"
stall rnullb0 /tmp/stall2
rm -f /tmp/powered_off
(echo 0 >$cfs/p/power && touch /tmp/powered_off) &
off=$!
n=0
while kill -0 $off 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 150 ] || fail "power=0 under parked polled reads did not finish in 15 s"
	sleep 0.1
done
[ -e /tmp/powered_off ] || fail "power=0 failed"
log "power=0 finished after about $((n / 10)) s"
[ ! -e /sys/block/rnullb0 ] || fail "rnullb0 still there after power=0"
reaped /tmp/stall2 "power=0"
rmdir $cfs/p || fail "rmdir"
unload_rnull

# A timed-out request leaves no partial byte count in its slot
# (badblocks_partial_io). One request slot on the poll queue (depth 1, no
# scheduler, whose requests are other slots); three adjacent 4 KiB polled
# reads (io_uring plugs three, so their bios merge into one request) of
# 0..23 with 8..23 bad park having moved the first 4 KiB, and time out.
# The slot's next request, the same reads with all of 0..23 bad, moves
# nothing: all three must fail with EIO (-5); a count left over would
# complete the first bio as read (res 4096).
load_rnull nr_devices=0 rq_timeout_ms=1000
mkdir $cfs/b || fail "mkdir"
for a in submit_queues poll_queues hw_queue_depth badblocks_partial_io; do
	echo 1 >$cfs/b/$a || fail "$a=1"
done
echo 1 >$cfs/b/power || fail "power=1"
echo none >/sys/block/rnullb0/queue/scheduler || fail "scheduler none"
echo "+8-23" >$cfs/b/badblocks || fail "+8-23"
poll-stall /dev/rnullb0 3 60 4 >/tmp/stall3 2>&1 &
pid=$! count=3
n=0
until grep -q "^submitted 3" /tmp/stall3 2>/dev/null; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "poll-stall did not submit: $(cat /tmp/stall3)"
	sleep 0.1
done
expect_eq "$(inflight rnullb0)" 1 "three adjacent polled reads in one request"
timed_out rnullb0 "the partial read"
reaped /tmp/stall3 "partial read"
echo "+0-23" >$cfs/b/badblocks || fail "+0-23"
poll-stall /dev/rnullb0 3 0 4 >/tmp/stall4 2>&1 || fail "poll-stall: $(cat /tmp/stall4)"
expect_eq "$(grep -c '^res -5$' /tmp/stall4)" 3 \
	"reads failing from their first sector after a timed-out partial read ($(tr '\n' ' ' </tmp/stall4))"
echo 0 >$cfs/b/power && rmdir $cfs/b || fail "power=0, rmdir"
unload_rnull
