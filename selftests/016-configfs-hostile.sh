#!/bin/sh
# Table-driven hostile input for every configfs attribute: empty,
# non-numeric, negative, overflowing, out-of-range and trailing-garbage
# values fail with EINVAL, log a line naming the attribute and its range,
# and leave the value unchanged; the boundaries are accepted; non-root
# writes are refused.
. "$(dirname "$0")/lib.sh"

GARBAGE="'' abc 99999999999999999999 -99999999999999999999 1x 0x 2.5 +"
cfs=/sys/kernel/config/rnull
tried=0
wrong=0

# attr_case FILE VALUE EXPECT(ok|bad): a refusal must be EINVAL and keep
# the value; `bad` counts them for the log check of attr_table.
attr_case() {
	before=$(cat "$1")
	if echo "$2" >"$1" 2>/tmp/err; then got=ok; else got=bad; fi
	tried=$((tried + 1))
	if [ "$got" != "$3" ]; then
		echo "WRONG: '$2' -> $1 was $got, expected $3"
		wrong=$((wrong + 1))
	fi
	[ "$got" = bad ] || return 0
	bad=$((bad + 1))
	if [ "$(cat "$1")" != "$before" ]; then
		echo "WRONG: refused '$2' changed $1 from '$before' to '$(cat "$1")'"
		wrong=$((wrong + 1))
	fi
	if ! grep -q "Invalid argument" /tmp/err; then
		echo "WRONG: '$2' -> $1 not EINVAL: $(cat /tmp/err)"
		wrong=$((wrong + 1))
	fi
}

# logged FILE: every refusal since kmsg_mark logged a line naming FILE
# and its range.
logged() {
	n=$(kmsg_since | grep -c "for configfs rnull/$(basename "$(dirname "$1")")/$(basename "$1"): must be")
	if [ "$n" != "$bad" ]; then
		echo "WRONG: $bad refusals of $1 logged $n lines naming it"
		wrong=$((wrong + 1))
	fi
}

# attr_table FILE MIN MAX: boundaries, just outside, garbage.
attr_table() {
	n0=$tried
	bad=0
	kmsg_mark
	attr_inputs "$1" "$2" "$3"
	logged "$1"
	log "$(basename "$1"): $((tried - n0)) inputs"
}

load_rnull nr_devices=0 host_queue_depth=16
d=$cfs/hostile
mkdir $d || fail "mkdir $d"
# name min max: the module parameters' ranges (size in MiB up to gb's 16384 GiB)
table="badblocks_once 0 1
badblocks_partial_io 0 1
blocking 0 1
cache_size 0 16777216
completion_nsec 0 1000000000
discard 0 1
fua 0 1
host_tags 0 1
hw_queue_depth 1 4096
index -1 63
irqmode 0 2
max_sectors 8 65535
mbps 0 1048576
memory_backed 0 1
no_sched 0 1
poll_queues 0 256
rotational 0 1
rotational_model 0 1
shared_tags 0 1
size 1 16777216
submit_queues 1 256
time_slice_us 0 100000"
echo "$table" | {
	while read -r name min max; do
		attr_table $d/$name "$min" "$max"
	done
	echo "$tried $wrong" >/tmp/hostile.count
}
read -r tried wrong </tmp/hostile.count
# blocksize: a power of two in 512..=4096.
bad=0
kmsg_mark
for v in 512 1024 2048 4096; do attr_case $d/blocksize $v ok; done
for v in 256 1000 3000 8192 0 -512 $GARBAGE; do
	[ "$v" = "''" ] && v=""
	attr_case $d/blocksize "$v" bad
done
logged $d/blocksize
rmdir $d || fail "rmdir"
# power, in a directory of default settings: the table left its maximums.
mkdir $d || fail "mkdir $d again"
bad=0
kmsg_mark
for v in -1 2 10 $GARBAGE; do
	[ "$v" = "''" ] && v=""
	attr_case $d/power "$v" bad
done
logged $d/power
[ ! -e /sys/block/rnullb0 ] || fail "a refused power write made a device"
attr_case $d/power 1 ok
[ -b /dev/rnullb0 ] || fail "power=1 made no device"
attr_case $d/power 1 ok
attr_case $d/power 0 ok
attr_case $d/power 0 ok
[ ! -e /sys/block/rnullb0 ] || fail "power=0 left the device"
rmdir $d || fail "rmdir"
unload_rnull

# host_tags=1 needs a host budget.
load_rnull nr_devices=0
mkdir $d || fail "mkdir $d without a budget"
expect_eq "$(cat $d/host_tags)" 0 "host_tags without a budget"
kmsg_mark
if echo 1 >$d/host_tags 2>/tmp/err; then
	echo "WRONG: host_tags=1 accepted without a host budget"
	wrong=$((wrong + 1))
fi
kmsg_since | grep -q "no host budget" || { echo "WRONG: no log line for host_tags=1"; wrong=$((wrong + 1)); }
expect_eq "$(cat $d/host_tags)" 0 "host_tags after the refusal"
tried=$((tried + 1))
rmdir $d || fail "rmdir"
unload_rnull
log "hostile configfs inputs tried: $tried, handled wrongly: $wrong"
[ "$wrong" -eq 0 ] || fail "$wrong hostile inputs handled wrongly"
