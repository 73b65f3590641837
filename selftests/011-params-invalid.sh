#!/bin/sh
# Hostile values for every module parameter, generated from the range its
# modinfo description gives by the hostile-input tool: range ends and one
# past them, overflow, whitespace and newlines, signs, garbage and values
# of a page and more. Each loads or fails the load as kstrtoll(s, 0) (or
# the list of names) and the range say; a refused load fails with EINVAL,
# leaves no module behind and logs at most one line naming the parameter
# and its range (the first refusal exactly one). Constraints between
# parameters are refused at load with a line naming them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"

hostile_params bounds overflow space sign garbage long
[ "$h_params" -gt 0 ] || fail "no parameter tried"

# refused ARGS... : the load fails with EINVAL and a line naming the
# constraint ($why).
refused() {
	if insmod "$RNULL_KO" "$@" 2>/tmp/insmod.err; then
		rmmod rnull
		fail "insmod rnull $* was accepted"
	fi
	grep -q "Invalid argument" /tmp/insmod.err || fail "insmod rnull $*: not EINVAL: $(cat /tmp/insmod.err)"
	# The last lines: the ring buffer is full of refusals by now, so a
	# line count (kmsg_mark) no longer moves.
	dmesg | tail -n 3 | grep -q "$why" || fail "insmod rnull $*: no log line with '$why'"
	! rnull_loaded || fail "rnull loaded after $*"
}
why="rotational_model: seek_max_us is below seek_min_us"
refused rotational_model=1 nr_devices=0 seek_min_us=1000 seek_max_us=999
why="rotational_model: readahead_min_kib is above segment_kib"
refused rotational_model=1 nr_devices=0 segment_kib=1024 readahead_min_kib=1028
why="rotational_model: segment_kib is not a multiple of 4"
refused rotational_model=1 nr_devices=0 segment_kib=6 readahead_min_kib=0
why="host_mbps=5 needs host_queue_depth"
refused nr_devices=0 host_mbps=5
# Without the model its parameters are not used, and not checked.
load_rnull nr_devices=0 seek_min_us=1000 seek_max_us=999
unload_rnull
# The module still loads fine afterwards.
load_rnull
unload_rnull
hostile_verdict "$h_params parameters"
