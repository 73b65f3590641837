#!/bin/sh
# Table-driven hostile input: every writable rnull sysfs attribute and
# every module parameter gets empty, non-numeric, negative, overflowing,
# out-of-range and trailing-garbage values and its boundaries. Invalid
# values must fail with EINVAL and leave the old value; valid boundaries
# must be accepted; non-root writes must be refused.
. "$(dirname "$0")/lib.sh"

GARBAGE="'' abc -1 99999999999999999999 -99999999999999999999 1x 0x 2.5 +"
tried=0
wrong=0

# attr_case FILE VALUE EXPECT(ok|bad)
attr_case() {
	before=$(cat "$1")
	if printf '%s\n' "$2" >"$1" 2>/dev/null; then got=ok; else got=bad; fi
	tried=$((tried + 1))
	if [ "$got" != "$3" ]; then
		echo "WRONG: '$2' -> $1 was $got, expected $3"
		wrong=$((wrong + 1))
	fi
	if [ "$got" = bad ] && [ "$(cat "$1")" != "$before" ]; then
		echo "WRONG: refused '$2' changed $1 from '$before' to '$(cat "$1")'"
		wrong=$((wrong + 1))
	fi
}

# attr_table FILE MIN MAX: boundaries, just outside, garbage.
attr_table() {
	n0=$tried
	attr_inputs "$1" "$2" "$3"
	log "$(basename "$(dirname "$1")")/$(basename "$1"): $((tried - n0)) inputs"
}

load_rnull nr_devices=2 host_queue_depth=16
h=/sys/module/rnull/host
attr_table $h/depth 1 1024
attr_table $h/borrow_expiry_us 0 10000000
attr_table $h/idle_ms 1 100000
attr_table $h/window_shared_pct 0 100
attr_table /sys/block/rnullb0/rnull/completion_nsec 0 1000000000
attr_table /sys/block/rnullb0/rnull/mbps 0 1048576
attr_table $h/mbps 0 1048576
attr_table /sys/block/rnullb1/mq/0/time_slice_us 0 100000
n0=$tried
# Every registered policy, as host/policy lists them.
for p in $(tr -d '[]' <$h/policy); do attr_case $h/policy $p ok; done
for g in "" FAIR "fair " " fair" "fair\nx" bogus 0 1; do attr_case $h/policy "$g" bad; done
log "host/policy: $((tried - n0)) inputs"
unload_rnull

# Module parameters: name min max
params="nr_devices 0 64
submit_queues 1 256
hw_queue_depth 1 4096
gb 1 16384
irqmode 0 2
completion_nsec 0 1000000000
memory_backed 0 1
shared_tags 0 1
blocking 0 1
rotational 0 1
max_sectors 8 65535
host_queue_depth 0 1024
mbps 0 1048576
borrow_expiry_us 0 10000000
rotational_model 0 1
rpm 3600 15000
seek_min_us 0 100000
seek_max_us 0 1000000
media_mbps 1 10000
bus_mbps 1 100000
cache_segments 1 64
segment_kib 4 65536
readahead_min_kib 0 65536
hit_overhead_ns 0 10000000
ncq_depth 1 32
ncq_max_wait_ms 1 10000
time_slice_us 0 100000
inject_timeout_percent 0 100
inject_requeue_percent 0 100
rq_timeout_ms 100 600000"

# param_case NAME=VALUE EXPECT
param_case() {
	tried=$((tried + 1))
	if insmod "$RNULL_KO" "$1" gb=1 2>/dev/null; then got=ok; else got=bad; fi
	rmmod rnull 2>/dev/null
	if [ "$got" != "$2" ]; then
		echo "WRONG: insmod rnull $1 was $got, expected $2"
		wrong=$((wrong + 1))
	fi
}
echo "$params" | while read -r name min max; do
	n0=$tried
	[ "$name" = gb ] || { param_case "$name=$min" ok; param_case "$name=$max" ok; }
	param_case "$name=$((min - 1))" bad
	param_case "$name=$((max + 1))" bad
	for g in $GARBAGE; do
		[ "$g" = "''" ] && g=""
		param_case "$name=$g" bad
	done
	echo "param $name: $((tried - n0)) inputs, $wrong wrong so far"
	echo "$tried $wrong" >/tmp/hostile.count
done
read -r ptried pwrong </tmp/hostile.count
# Parameters with constraints beyond a range.
for arg in bs=256 bs=1000 bs=8192 tag_policy=bogus tag_policy=FAIR tag_policy= \
	time_slice_start=bogus time_slice_start=Completion time_slice_start=; do
	tried=$((tried + 1))
	if insmod "$RNULL_KO" "$arg" 2>/dev/null; then
		echo "WRONG: $arg accepted"
		wrong=$((wrong + 1))
		rmmod rnull
	fi
done
# The model's constraints between parameters, checked at load: refused
# with a log line naming them.
for args in "seek_min_us=1000 seek_max_us=999" "segment_kib=1024 readahead_min_kib=1028" \
	"segment_kib=6 readahead_min_kib=0"; do
	tried=$((tried + 1))
	# shellcheck disable=SC2086 # one word per parameter
	if insmod "$RNULL_KO" rotational_model=1 gb=1 $args 2>/dev/null; then
		echo "WRONG: rotational_model=1 $args accepted"
		wrong=$((wrong + 1))
		rmmod rnull
	# The last lines: the ring buffer is full of this test's refusals by
	# now, so a line count (kmsg_mark) no longer moves.
	elif ! dmesg | tail -n 4 | grep -qE "rotational_model: (seek_max_us|readahead_min_kib|segment_kib)"; then
		echo "WRONG: rotational_model=1 $args refused without naming the parameters"
		wrong=$((wrong + 1))
	fi
done
# Without the model they are not used, and not checked.
tried=$((tried + 1))
if insmod "$RNULL_KO" gb=1 seek_min_us=1000 seek_max_us=999; then
	rmmod rnull
else
	echo "WRONG: seek_max_us below seek_min_us refused without rotational_model"
	wrong=$((wrong + 1))
fi
total=$((tried + ptried))
wrong=$((wrong + pwrong))
log "hostile inputs tried: $total (sysfs and parameters), accepted or refused wrongly: $wrong"
[ "$wrong" -eq 0 ] || fail "$wrong hostile inputs handled wrongly"
