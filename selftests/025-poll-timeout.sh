#!/bin/sh
# A poller that stops polling (null_blk's null_timeout_rq on a poll
# queue): reads parked on a poll queue of a device with a 1 s request
# timeout are ended by blk-mq's timeout with a timeout error (ETIMEDOUT
# to io_uring, "timeout error" in the log) instead of waiting for a poll
# forever, and powering a configfs device off under such reads finishes.
. "$(dirname "$0")/lib.sh"

requires_file /usr/bin/poll-stall
cfs=/sys/kernel/config/rnull
# Reads in flight on DEV (the first field of its inflight file).
inflight() { set -- $(cat "/sys/block/$1/inflight"); echo "$1"; }

# stall DEV OUT: starts poll-stall with 8 reads of DEV that it does not
# poll for 60 s (or until SIGUSR1), output to OUT; waits until they are
# submitted. Sets $pid.
stall() {
	poll-stall "/dev/$1" 8 60 >"$2" 2>&1 &
	pid=$!
	n=0
	until grep -q "^submitted 8" "$2"; do
		n=$((n + 1))
		[ $n -lt 100 ] || fail "poll-stall did not submit: $(cat "$2")"
		sleep 0.1
	done
}

# reaped OUT WHAT: wakes poll-stall, which reaps; every read ended with
# ETIMEDOUT (-110).
reaped() {
	kill -USR1 "$pid"
	wait "$pid" || fail "$2: poll-stall failed: $(cat "$1")"
	expect_eq "$(grep -c '^res -110$' "$1")" 8 "$2: reads ended with ETIMEDOUT"
}

# On a load-time device: the timeout ends the parked reads while the
# device lives, within a few request timeouts (blk-mq rounds its timer
# up to a second).
kmsg_mark
load_rnull submit_queues=1 poll_queues=1 rq_timeout_ms=1000
stall rnullb0 /tmp/stall1
expect_eq "$(inflight rnullb0)" 8 "parked reads in flight"
n=0
while [ "$(inflight rnullb0)" -ne 0 ]; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "parked reads not timed out after 10 s ($(inflight rnullb0) in flight)"
	sleep 0.1
done
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
