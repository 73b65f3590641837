#!/bin/sh
# A stress run in the guest: engine.sh under a watchdog. An operation
# that makes no progress for STRESS_OP_TIMEOUT s (hung in the kernel), or a
# fio round that does not end within STRESS_IO_TIMEOUT s (I/O stalled),
# fails the run: the watchdog reports it at the operation it happened in,
# with the seed to replay it and what the stuck tasks wait for.
#
# usage: STRESS_SEED=s STRESS_OPS=n sh main.sh   (exit status: 0 if passed)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/devices.sh"
. "$here/checks.sh"

S=/tmp/stress
rm -rf "$S"
mkdir -p "$S"
# The debug kernel (KASAN, lockdep; kmemleak is its mark) runs several
# times slower.
scale=1
[ -e "$KMEMLEAK" ] && scale=4
# A verify round takes about 40 s on the base kernel under TCG on a
# loaded host, twice that at worst.
OP_TIMEOUT=${STRESS_OP_TIMEOUT:-$((120 * scale))}
IO_TIMEOUT=${STRESS_IO_TIMEOUT:-$((180 * scale))}
export STRESS_DIR="$S" STRESS_IO_TIMEOUT="$IO_TIMEOUT"
SEED=${STRESS_SEED:-1}
OPS=${STRESS_OPS:-500}

# The watchdog's first read comes before the engine's first beat.
echo "0 start" >"$S/beat"
(
	sh "$here/engine.sh"
	echo $? >"$S/rc"
) &

# diagnose: the budget's and the queues' state.
diagnose() {
	_line="# host:"
	for _f in policy depth in_use active_queues waiting_queues starved_queues; do
		_line="$_line $_f=$(cat "$H/$_f" 2>/dev/null)"
	done
	echo "$_line"
	for _d in /sys/block/rnullb*; do
		[ -e "$_d/rnull/tags_in_flight" ] || continue
		echo "# ${_d##*/}: tags_in_flight=$(cat "$_d/rnull/tags_in_flight")" \
			"tags_waiting=$(cat "$_d/rnull/tags_waiting")" \
			"scheduler=$(cat "$_d/queue/scheduler")"
	done
	for _h in /sys/kernel/debug/block/rnullb*/hctx*; do
		for _f in busy dispatch; do
			[ -s "$_h/$_f" ] && echo "# ${_h#/sys/kernel/debug/block/}/$_f: $(head -c 200 "$_h/$_f" | tr '\n' ' ')"
		done
	done
	stuck_tasks
}

# hung WHAT: the run fails at the operation under way.
hung() {
	read -r _n _desc <"$S/beat"
	# Stop the engine and its fio where they still can.
	for _f in "$S"/pid.engine "$S"/pid.loop.* "$S"/pid.fio.*; do
		[ -e "$_f" ] && kill -9 "$(cat "$_f")" 2>/dev/null
	done
	read -r passed failed skipped <"$S/count" 2>/dev/null
	if [ -e "$S/failed" ]; then
		echo "# the cleanup after the failure hung: $1"
	else
		failed=$((${failed:-0} + 1))
		echo "not ok $_n - $_desc: $1"
		[ "$_n" -le "$OPS" ] || _n=$OPS
		echo "# FAILED: SEED=$SEED, at operation $_n of $OPS; replay: make stress SEED=$SEED OPS=$_n${STRESS_SKIP:+ STRESS_SKIP=\"$STRESS_SKIP\"}"
	fi
	diagnose
	[ "${skipped:-0}" = 0 ] || echo "# $skipped skipped"
	echo "${passed:-0} passed, $failed failed"
	exit 1
}

# rounds NAME: V = the loop's round, "-" when it does not run (ended,
# paused or stopping: their own timeouts cover those).
rounds() {
	V=-
	[ -e "$S/rounds.$1" ] && [ ! -e "$S/pause" ] && [ ! -e "$S/stop" ] &&
		[ ! -e "$S/fail.$1" ] && read -r V <"$S/rounds.$1"
}

# same NAME VALUE: FOR = the seconds NAME has had VALUE, by the uptime
# clock (a pass of the loop below takes longer than its sleep under TCG);
# "-" is no value, never timed.
same() {
	_last="" _at=0
	eval "_last=\${last_$1-} _at=\${at_$1:-0}"
	if [ "$2" = - ] || [ "$2" != "$_last" ]; then
		eval "last_$1=\$2 at_$1=$CS"
		FOR=0
		return
	fi
	FOR=$(((CS - _at) / 100))
}

while [ ! -e "$S/rc" ]; do
	sleep 1
	cs_now
	read -r _b <"$S/beat" 2>/dev/null
	same beat "$_b"
	[ $FOR -lt "$OP_TIMEOUT" ] || hung "no progress for $OP_TIMEOUT s (hung)"
	rounds verify
	same verify "$V"
	[ $FOR -lt "$IO_TIMEOUT" ] || hung "fio verify round $V has not ended in $IO_TIMEOUT s (I/O stalled)"
	rounds load
	same load "$V"
	[ $FOR -lt "$IO_TIMEOUT" ] || hung "fio load round $V on $CYC_DEV has not ended in $IO_TIMEOUT s (I/O stalled)"
done
read -r rc <"$S/rc"
exit "$rc"
