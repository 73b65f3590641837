#!/bin/sh
# The stress engine (run by main.sh, under its watchdog): STRESS_OPS
# operations drawn from STRESS_SEED while fio verifies data on three
# devices that share a host budget (devices.sh), then the end checks.
# Prints TAP: one line per operation, then one per end check, and
# "N passed, N failed" last. The first failure ends the run: it prints the
# seed and the operation's number, which replay it (the operations before
# it are the "ok" lines above it). Exit status: 0 if nothing failed.
#
# Environment: STRESS_SEED (default 1), STRESS_OPS (default 500),
# STRESS_SKIP (operations to leave out, e.g. "hotplug"), STRESS_DIR (the
# run's state, from main.sh), STRESS_IO_TIMEOUT (s).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/prng.sh"
. "$here/lib.sh"
. "$here/devices.sh"
. "$here/ops-configfs.sh"
. "$here/ops-sysfs.sh"
. "$here/ops-system.sh"
. "$here/io.sh"
. "$here/checks.sh"

SEED=${STRESS_SEED:-1}
OPS=${STRESS_OPS:-500}
S=${STRESS_DIR:-/tmp/stress}
IO_TIMEOUT=${STRESS_IO_TIMEOUT:-60}
RNULL_MODDIR=${RNULL_MODDIR:-/lib/modules/rnull}
echo $$ >"$S/pid.engine"

# The operations and their weights (their shares of the draws).
OP_TABLE="power:6 rmdir:2 setting:5 queues:8 badblocks:8 bbio:3 completion:4 slice:6 mbps:5
policy:8 depth:7 host:5 sched:6 nrreq:5 hotplug:4 rmmod:2 rmroot:1 refuse:5 quiesce:1 data:2
memcg:1 failalloc:2"
# Those that need a kernel feature (req_NAME says whether it is there).
OP_NEEDS="hotplug memcg failalloc"
# The end checks, after the operations.
END_CHECKS=5

passed=0 failed=0 skipped=0
counts() { echo "$passed $failed $skipped" >"$S/count"; }

# summary: the last line.
summary() {
	[ "$skipped" = 0 ] || echo "# $skipped skipped"
	echo "$passed passed, $failed failed"
}

# replay_hint N: how to run the same operations again.
replay_hint() {
	echo "# FAILED: SEED=$SEED, at operation $1 of $OPS; replay: make stress SEED=$SEED OPS=$1${STRESS_SKIP:+ STRESS_SKIP=\"$STRESS_SKIP\"}"
}

# abort: the first failure (test point $1, ERR): report it, stop what
# runs, leave no device or module behind if that still works, exit 1.
abort() {
	failed=$((failed + 1))
	echo "not ok $1 - $DESC: $ERR"
	counts
	_n=$1
	[ "$_n" -le "$OPS" ] || _n=$OPS
	replay_hint "$_n"
	: >"$S/failed"
	echo "$1 cleanup after the failure" >"$S/beat"
	loops_kill
	loops_wait
	hotplug_all_online 2>/dev/null
	teardown_devices 2>/dev/null
	kmsg_stop
	summary
	exit 1
}

# point STATUS: the outcome of test point $OPN (STATUS 0: passed, else
# ERR says why); the checks after every operation count in it.
point() {
	_rc=$1
	_err=$ERR
	ERR=""
	# A splat or a fio failure fails the point it shows up in.
	check_kmsg || {
		_rc=1
		_err="${_err:+$_err; }$ERR"
	}
	ERR=""
	check_io || {
		_rc=1
		_err="${_err:+$_err; }$ERR"
	}
	ERR=$_err
	if [ "$_rc" != 0 ]; then
		[ -n "$ERR" ] || ERR="failed"
		abort "$OPN"
	fi
	passed=$((passed + 1))
	echo "ok $OPN - $DESC"
	counts
}

# choose_op: OP = an operation drawn by weight.
OP_TOTAL=0
for _e in $OP_TABLE; do OP_TOTAL=$((OP_TOTAL + ${_e#*:})); done
choose_op() {
	rnd $OP_TOTAL
	_r=$R
	for _e in $OP_TABLE; do
		if [ "$_r" -lt "${_e#*:}" ]; then
			OP=${_e%:*}
			return
		fi
		_r=$((_r - ${_e#*:}))
	done
}

case "$SEED$OPS" in
*[!0-9]*)
	echo "Bail out! STRESS_SEED=$SEED and STRESS_OPS=$OPS must be integers"
	exit 2
	;;
esac
[ "$SEED" -lt 2147483648 ] || {
	echo "Bail out! STRESS_SEED=$SEED: at most 2147483647"
	exit 2
}
prng_seed "$SEED"
# Possible CPUs (configfs queue counts are checked against them), "0-N".
read -r _p </sys/devices/system/cpu/possible
CPUS=$((${_p#*-} + 1))

echo "TAP version 13"
echo "1..$((OPS + END_CHECKS))"
echo "# stress: SEED=$SEED OPS=$OPS, $CPUS possible CPUs, $(nproc) online, kernel $(uname -r)"
for _o in $OP_NEEDS; do
	if ! "req_$_o"; then
		eval "SKIP_$_o=\$WHY"
		echo "# operation $_o skipped: $WHY"
	fi
done
for _o in ${STRESS_SKIP:-}; do
	case " $OP_TABLE " in
	*[[:space:]]"$_o:"*) ;;
	*)
		echo "Bail out! STRESS_SKIP names $_o, not an operation"
		exit 2
		;;
	esac
	eval "SKIP_$_o=\"left out by STRESS_SKIP\""
	echo "# operation $_o skipped: left out by STRESS_SKIP"
done

OPN=0
cs_now
RUN_T0=$CS
DESC="setup: rnull, live, cyc, fio"
echo "0 $DESC" >"$S/beat"
kmsg_start
kmemleak_mark
setup_devices || abort 0
# shellcheck disable=SC2086 # one argument per device
verify_loop $VERIFY_DEVS &
echo $! >"$S/pid.loop.verify"
load_loop "$CYC_DEV" &
echo $! >"$S/pid.loop.load"

while [ $OPN -lt "$OPS" ]; do
	OPN=$((OPN + 1))
	choose_op
	eval "_skip=\${SKIP_$OP:-}"
	if [ -n "$_skip" ]; then
		skipped=$((skipped + 1))
		echo "ok $OPN - $OP # SKIP $_skip"
		counts
		continue
	fi
	ERR=""
	cs_now
	_t0=$CS
	"op_$OP"
	_rc=$?
	cs_now
	# Slow operations, for whoever sizes a run.
	[ $((CS - _t0)) -lt 300 ] || echo "# operation $OPN took $(((CS - _t0) / 100)) s"
	point $_rc
done
cs_now
echo "# $OPS operations in $(((CS - RUN_T0) / 100)) s"

# The end checks.
OPN=$((OPS + 1))
desc "fio verify: the last rounds end without an error or a mismatch"
loops_stop
loops_wait
read -r _rounds <"$S/rounds.verify"
ERR=""
_rc=0
[ "${_rounds:-0}" -ge 1 ] || {
	ERR="no verify round ran"
	_rc=1
}
desc "fio verify on $VERIFY_DEVS: $_rounds rounds without an error or a mismatch"
[ -s "$S/round_cs.verify" ] && awk '{ s += $1; if ($1 > m) m = $1 }
	END { printf "# verify rounds: %d, %.1f s on average, the longest %.1f s\n", NR, s / NR / 100, m / 100 }' \
	"$S/round_cs.verify"
point $_rc

OPN=$((OPN + 1))
desc "every host tag back, nobody waiting, with no I/O; the sentinels intact"
tags_idle && sentinels_check
point $?

OPN=$((OPN + 1))
desc "teardown: every CPU online, rmdir cyc and live, rmmod rnull; no task hung"
hotplug_all_online && teardown_devices && no_hung_tasks
point $?

OPN=$((OPN + 1))
desc "no kernel splat"
# The log's last records on their way into $S/kmsg.
sleep 1
point 0

OPN=$((OPN + 1))
kmsg_stop
if [ -w "$KMEMLEAK" ]; then
	desc "kmemleak: no new unreferenced object"
	check_kmemleak
	point $?
else
	skipped=$((skipped + 1))
	echo "ok $OPN - kmemleak # SKIP no $KMEMLEAK (CONFIG_DEBUG_KMEMLEAK off)"
fi
counts
summary
[ "$failed" = 0 ]
