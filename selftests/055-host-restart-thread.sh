#!/bin/sh
# The host budget's restart thread: with host_queue_depth there is one
# rnull_restart kthread, real-time (SCHED_FIFO), which re-runs refused
# devices; a contended run on it hands every tag back and leaves no device
# waiting; without a budget there is none, and it goes with the module.
. "$(dirname "$0")/lib.sh"
trap cleanup_rnull EXIT

# restart_pids: the pids of the rnull_restart threads.
restart_pids() {
	for s in /proc/[0-9]*/stat; do
		read -r line <"$s" 2>/dev/null || continue
		case "$line" in
		*" (rnull_restart) "*) echo "${line%% *}" ;;
		esac
	done
}

load_rnull nr_devices=2
[ -z "$(restart_pids)" ] || fail "a restart thread without host_queue_depth"
unload_rnull

load_rnull nr_devices=2 host_queue_depth=4 irqmode=2 completion_nsec=200000
pids=$(restart_pids)
[ "$(echo "$pids" | wc -w)" = 1 ] || fail "expected one rnull_restart thread, found '$pids'"
# Field 41 of /proc/PID/stat is the scheduling policy (1: SCHED_FIFO);
# the name has no spaces, so the fields split on blanks.
read -r stat <"/proc/$pids/stat"
policy=$(echo "$stat" | cut -d' ' -f41)
expect_eq "$policy" 1 "rnull_restart's scheduling policy (SCHED_FIFO)"

# Two devices at depth 16 each on 4 tags: refusals and restarts.
fio_terse --name=a --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
	--ioengine=libaio --iodepth=16 --time_based --runtime=2 \
	--name=b --filename=/dev/rnullb1 --direct=1 --rw=randread --bs=4k \
	--ioengine=libaio --iodepth=16 --time_based --runtime=2 >/tmp/fio.out 2>&1 ||
	fail "fio failed: $(tail -n 3 /tmp/fio.out)"
f0=$(dev_attr 0 tags_failures)
f1=$(dev_attr 1 tags_failures)
[ $((f0 + f1)) -gt 0 ] || fail "no refusal on 4 tags at depth 32: the restarts were not exercised"
expect_eq "$(cat /sys/module/rnull/host/in_use)" 0 "host tags held after the run"
expect_eq "$(cat /sys/module/rnull/host/waiting_queues)" 0 "devices waiting after the run"
log "refusals: rnullb0 $f0, rnullb1 $f1; restart thread $pids"
unload_rnull
# The thread has exited when rmmod returns; it leaves /proc when it is
# reaped, a moment later.
n=0
while [ -d "/proc/$pids" ] && [ $n -lt 20 ]; do
	sleep 0.1
	n=$((n + 1))
done
[ ! -d "/proc/$pids" ] || fail "rnull_restart ($pids) outlived the module"
