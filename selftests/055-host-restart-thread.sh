#!/bin/sh
# The host budget's restart thread: with host_queue_depth there is one
# rnull_restart kthread, real-time (SCHED_FIFO), which re-runs refused
# devices; a device refused while it holds no tag (so that blk-mq's own
# restart, on one of its completions, cannot re-run it) still completes
# its I/O, through the thread; every tag comes back and no device waits;
# without a budget there is no thread, and it goes with the module.
. "$(dirname "$0")/lib.sh"
trap cleanup_rnull EXIT

h=/sys/module/rnull/host

# restart_pids: the pids of the rnull_restart threads.
restart_pids() {
	for s in /proc/[0-9]*/stat; do
		read -r line 2>/dev/null <"$s" || continue
		case "$line" in
		*" (rnull_restart) "*) echo "${line%% *}" ;;
		esac
	done
}

# switches PID: the thread's context switches so far (it sleeps between
# restarts: each restart pass is one).
switches() {
	sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "/proc/$1/status"
}

load_rnull nr_devices=2
[ -z "$(restart_pids)" ] || fail "a restart thread without host_queue_depth"
unload_rnull

load_rnull nr_devices=2 host_queue_depth=4 tag_policy=none irqmode=2 completion_nsec=200000
pids=$(restart_pids)
[ "$(echo "$pids" | wc -w)" = 1 ] || fail "expected one rnull_restart thread, found '$pids'"
# Field 41 of /proc/PID/stat is the scheduling policy (1: SCHED_FIFO);
# the name has no spaces, so the fields split on blanks.
read -r stat <"/proc/$pids/stat"
policy=$(echo "$stat" | cut -d' ' -f41)
expect_eq "$policy" 1 "rnull_restart's scheduling policy (SCHED_FIFO)"

# Under `none` fio's job on rnullb0 (iodepth 16) keeps the 4 tags busy
# and its job on rnullb1 (iodepth 1) is refused with nothing in flight:
# only a wake-up from rnullb0's completions, run by the thread, dispatches
# it again. Without that, rnullb1's request stays refused and fio never
# finishes: the timeout turns that into a failure. (A lost SCHED_RESTART
# clear shows only in a narrow race, which rtags/tests/loom_handoff.rs
# models.)
before=$(switches "$pids")
timeout -k 5 30 fio --output-format=terse --terse-version=3 \
	--name=a --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
	--ioengine=libaio --iodepth=16 --time_based --runtime=2 \
	--name=b --filename=/dev/rnullb1 --direct=1 --rw=randread --bs=4k \
	--ioengine=libaio --iodepth=1 --time_based --runtime=2 >/tmp/fio.out 2>&1
rc=$?
[ "$rc" != 124 ] && [ "$rc" != 137 ] ||
	fail "fio did not finish in 30 s: a refused rnullb1 was not restarted"
[ "$rc" = 0 ] || fail "fio failed ($rc): $(tail -n 3 /tmp/fio.out)"
after=$(switches "$pids")
f1=$(dev_attr 1 tags_failures)
[ "$f1" -gt 0 ] || fail "rnullb1 was never refused: the scenario did not exercise the restarts"
# fio's terse lines, second job: field 8 is its read IOPS.
iops_b=$(grep '^3;' /tmp/fio.out | sed -n 2p | terse_field 8)
[ "${iops_b:-0}" -gt 0 ] || fail "rnullb1 completed nothing after $f1 refusals"
[ "$after" -gt "$before" ] || fail "the restart thread never ran ($before -> $after switches)"
sleep 0.2
expect_eq "$(cat $h/in_use)" 0 "host tags held after the run"
expect_eq "$(cat $h/waiting_queues)" 0 "devices waiting after the run"
log "rnullb1: $f1 refusals, $iops_b IOPS; restart thread $pids: $before -> $after switches"
unload_rnull
# The thread has exited when rmmod returns; it leaves /proc when it is
# reaped, a moment later.
n=0
while [ -d "/proc/$pids" ] && [ $n -lt 20 ]; do
	sleep 0.1
	n=$((n + 1))
done
[ ! -d "/proc/$pids" ] || fail "rnull_restart ($pids) outlived the module"
