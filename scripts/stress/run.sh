#!/usr/bin/env bash
# `make stress`: seeded random run-time operations under fio verify, in
# one guest boot (scripts/stress/guest/: engine.sh says what runs).
#
# usage: [SEED=1] [OPS=500] [FLAVOUR=base|debug | KDIR=<tree>] [STRESS_SKIP="op ..."]
#        scripts/stress/run.sh
#
# The same SEED and OPS draw the same operations with the same arguments.
# A failure names the operation it happened at (n): OPS=n with the same
# SEED replays the run up to it; the operations before it are the "ok"
# lines of the TAP, kept in out/stress-<kernel>-<seed>.tap. The last line
# is "N passed, N failed"; exit status 0 if nothing failed (a splat in the
# kernel log or a guest that did not finish fails the run whatever the
# TAP says).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
seed=${SEED:-1}
ops=${OPS:-500}
case "$seed$ops" in
*[!0-9]*)
	echo "stress: SEED=$seed and OPS=$ops must be integers" >&2
	exit 2
	;;
esac

if [ -n "${KDIR:-}" ]; then
	kdir=$KDIR
	kernel=$(basename "$kdir")
	replay_kernel=" KDIR=$kdir"
else
	kernel=${FLAVOUR:-base}
	replay_kernel=""
	[ "$kernel" = base ] || replay_kernel=" FLAVOUR=$kernel"
	FLAVOUR=$kernel "$top/scripts/kernel.sh" build
	kdir=$(FLAVOUR=$kernel "$top/scripts/kernel.sh" dir)
fi
make -s -C "$top" modules initramfs KDIR="$kdir"

# The debug kernel (KASAN) needs more memory and time; the guest scales
# its own timeouts when it sees kmemleak. The guest's timeout only guards
# against a guest that hangs: an operation takes about 1.3 s on the base
# kernel under TCG on a loaded host.
if grep -q '^CONFIG_KASAN=y' "$kdir/.config"; then
	mem=2G per_op=15 base_s=900
else
	mem=${MEM:-1G} per_op=3 base_s=300
fi
env_args=(--env "STRESS_SEED=$seed" --env "STRESS_OPS=$ops")
for v in STRESS_SKIP STRESS_OP_TIMEOUT STRESS_IO_TIMEOUT; do
	[ -z "${!v:-}" ] || env_args+=(--env "$v=${!v}")
done

mkdir -p "$top/out"
tap="$top/out/stress-$kernel-$seed.tap"
set +e
MEM=$mem RNULL_TIMEOUT=${RNULL_TIMEOUT:-$((base_s + ops * per_op))} \
	"$top/scripts/qemu.sh" --kdir "$kdir" --name "stress-$kernel-$seed" \
	--job "$top/scripts/jobs/stress.sh" "${env_args[@]}" | tee "$tap"
status=${PIPESTATUS[0]}
set -e

tr -d '\r' <"$tap" >"$tap.tmp" && mv "$tap.tmp" "$tap"
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$tap" | tail -n1)
passed=${last%% passed*}
failed=${last#*passed, }
failed=${failed%% failed}
passed=${passed:-0} failed=${failed:-0}
if [ "$status" != 0 ]; then
	if [ "$failed" = 0 ]; then
		failed=1
		echo "stress: the guest run failed (status $status) after its checks passed: see qemu's lines above" >&2
	fi
	n=$(sed -n 's/^not ok \([0-9]*\) .*/\1/p' "$tap" | head -n1)
	[ -n "$n" ] && [ "$n" -le "$ops" ] || n=$ops
	echo "stress: FAILED: SEED=$seed at operation $n of $ops; replay: make stress SEED=$seed OPS=$n$replay_kernel${STRESS_SKIP:+ STRESS_SKIP=\"$STRESS_SKIP\"}"
	echo "stress: the operations done before it: the 'ok' lines of $tap"
fi
echo "$passed passed, $failed failed"
exit "$status"
