#!/bin/sh
# The `window` policy of the host budget (after Keith Busch's RFC): it can be
# chosen at load and in sysfs, its shared percentage reads back what was
# written, hostile input is refused with a log line naming the file and
# changes nothing, non-root writes are refused, and two devices sharing the
# budget under `window` both complete fio, each limited to its window and
# its slice of the shared part, also while the percentage and the policy
# change.
. "$(dirname "$0")/lib.sh"

h=/sys/module/rnull/host
pct=$h/window_shared_pct

# write_attr FILE VALUE: printf VALUE > FILE, return its status.
write_attr() { printf '%s\n' "$2" >"$1" 2>/dev/null; }

load_rnull nr_devices=2 host_queue_depth=32 tag_policy=window irqmode=2 \
	completion_nsec=200000 submit_queues="$(nproc)"
grep -q '\[window\]' $h/policy || fail "tag_policy=window not active: $(cat $h/policy)"
expect_eq "$(cat $pct)" 10 "default window_shared_pct"
write_attr $h/policy fair || fail "cannot select fair"
write_attr $h/policy window || fail "cannot select window"
grep -q '\[window\]' $h/policy || fail "window not active after writing it: $(cat $h/policy)"

for good in 0 100 25; do
	write_attr $pct "$good" || fail "window_shared_pct rejected $good"
	expect_eq "$(cat $pct)" "$good" "window_shared_pct after writing $good"
done
for bad in -1 101 0x65 abc "" 1x 2.5 " 5" 99999999999999999999; do
	kmsg_mark
	if write_attr $pct "$bad"; then
		fail "window_shared_pct accepted '$bad'"
	fi
	expect_eq "$(cat $pct)" 25 "window_shared_pct unchanged after '$bad'"
	kmsg_since | grep -q "for host/window_shared_pct: must be an integer in 0..=100" ||
		fail "no log line for '$bad': $(kmsg_since)"
done
if su nobody -s /bin/sh -c "echo 50 > $pct" 2>/dev/null; then
	fail "nobody could write window_shared_pct"
fi
expect_eq "$(cat $pct)" 25 "window_shared_pct after nobody's write"

# 32 tags, 25% shared: 8 shared, a window of 12 per active device and a
# slice of 4 of the shared tags, so each may hold 16. Both devices ask for
# more than the whole budget. A device stays active for idle_ms after its
# last I/O: 5 s keeps both active for the whole run however slowly the
# guest (a debug kernel) serves them.
echo 5000 >$h/idle_ms || fail "could not set idle_ms"
fio_terse --name=a --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=32 --time_based --runtime=3 \
	--name=b --filename=/dev/rnullb1 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=32 --time_based --runtime=3 >/tmp/fio.out &
pid=$!
max=0
limits=""
# The limits are read with the shell's own `read` (device attributes render
# once per open): two forks fewer per sample, which on a debug kernel under
# load is what decides how many samples fall while both devices run.
while kill -0 $pid 2>/dev/null; do
	used=$(cat $h/in_use)
	[ "$used" -gt "$max" ] && max=$used
	read -r l0 </sys/block/rnullb0/rnull/tags_limit
	read -r l1 </sys/block/rnullb1/rnull/tags_limit
	limits="$limits $l0/$l1"
	sleep 0.1
done
wait $pid || fail "fio failed under window"
[ "$max" -le 32 ] || fail "in_use reached $max with depth 32"
a=$(sed -n 1p /tmp/fio.out | terse_field 6)
b=$(sed -n 2p /tmp/fio.out | terse_field 6)
log "window: rnullb0 ${a} KiB, rnullb1 ${b} KiB, max in_use $max, limits$limits," \
	"failures $(dev_attr 0 tags_failures)/$(dev_attr 1 tags_failures)"
[ "$a" -gt 0 ] && [ "$b" -gt 0 ] || fail "a device made no progress under window"
case "$limits" in
*" 16/16"*) ;;
*) fail "the devices never had windows of 12 plus 4 shared: limits$limits" ;;
esac

# Move the windows while fio runs: percentages, the policy, the depth.
fio_terse --name=a --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=32 --time_based --runtime=3 \
	--name=b --filename=/dev/rnullb1 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=32 --time_based --runtime=3 >/tmp/fio.out &
pid=$!
i=0
while kill -0 $pid 2>/dev/null; do
	echo $((i * 7 % 101)) >$pct
	[ $((i % 5)) = 0 ] && echo fair >$h/policy && echo window >$h/policy
	echo $((8 + i % 25)) >$h/depth
	i=$((i + 1))
done
wait $pid || fail "fio failed while the windows moved"
a=$(sed -n 1p /tmp/fio.out | terse_field 6)
b=$(sed -n 2p /tmp/fio.out | terse_field 6)
log "$i rounds of changes: rnullb0 ${a} KiB, rnullb1 ${b} KiB"
[ "$a" -gt 0 ] && [ "$b" -gt 0 ] || fail "a device made no progress while the windows moved"
sleep 0.3
expect_eq "$(cat $h/in_use)" 0 "in_use after I/O"
expect_eq "$(dev_attr 0 tags_in_flight)" 0 "rnullb0 in flight after I/O"
expect_eq "$(dev_attr 1 tags_in_flight)" 0 "rnullb1 in flight after I/O"
unload_rnull
