#!/usr/bin/env bash
# Boot the guest with the blktests layer (out/initramfs-blktests.cpio.gz, from
# scripts/initramfs-blktests.sh) and run blktests against rnull
# (blktests/run.sh in the guest). TAP goes to stdout and to out/blktests.tap
# (full) or out/blktests-quick.tap (quick); the last line is
# 'N passed, N skipped, N failed'.
#
# usage: scripts/blktests.sh KDIR full|quick
#   full:  every listed device test under each rnull configuration, timed
#          tests limited to TIMEOUT (30 s), then the rnull group (`make blktests`)
#   quick: blktests' quick run (`./check -q 3`) on one configuration, then the
#          rnull group likewise (`make test`)
# Overrides: TESTS, GROUP_TESTS, QUICK, TIMEOUT, RNULL_BLKTESTS_CONFIGS, and
# BLKTESTS_ENV="VAR=value ..." for the tests' own knobs (e.g.
# RNULL_035_POLICIES=none, which makes rnull/004 fail).
set -uo pipefail

kdir=$1 mode=${2:-full}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

# The rnull configurations TEST_DEVS come from ('label:module parameters').
# mem: memory-backed with discard (configfs devices, like null_blk's, have
# none unless asked), write-zeroes, a volatile write cache (so
# flushes reach the driver), softirq completions. timer-host: the same
# behind blocking queues, hrtimer completions and a 32-tag host budget that
# block/004's 64 jobs and block/005's per-CPU jobs overrun.
mem="mem:memory_backed=1 gb=4 discard=1"
timer_host="timer-host:memory_backed=1 gb=4 discard=1 blocking=1 irqmode=2 completion_nsec=20000 host_queue_depth=32 tag_policy=borrow"
case $mode in
full)
	configs=${RNULL_BLKTESTS_CONFIGS:-$mem;$timer_host}
	quick=${QUICK:-}
	tap=out/blktests.tap
	;;
quick)
	configs=${RNULL_BLKTESTS_CONFIGS:-$mem}
	quick=${QUICK:-3}
	tap=out/blktests-quick.tap
	# rnull/001 and rnull/004 compare wall-clock IOPS between modes: on a
	# loaded TCG host a run varies several-fold, so `make test` (which must
	# not depend on speed) leaves them to `make blktests`.
	group_default="rnull/002 rnull/003"
	;;
*) echo "blktests.sh: mode is full or quick, not $mode" >&2; exit 2 ;;
esac

extra_env=()
for kv in ${BLKTESTS_ENV:-}; do extra_env+=(--env "$kv"); done
mkdir -p out
scripts/qemu.sh --kdir "$kdir" --name "blktests-$mode" --job scripts/jobs/blktests.sh \
	--initrd-extra out/initramfs-blktests.cpio.gz \
	--env "BLKTESTS_DEVICE_TESTS=${TESTS:-}" \
	--env "BLKTESTS_GROUP_TESTS=${GROUP_TESTS-${group_default:-rnull}}" \
	--env "BLKTESTS_QUICK=$quick" \
	--env "BLKTESTS_TIMEOUT=${TIMEOUT:-30}" \
	--env "RNULL_BLKTESTS_CONFIGS=$configs" "${extra_env[@]}" | tee "$tap"
status=${PIPESTATUS[0]}
p=$(grep -E '^ok ' "$tap" | grep -cv '# SKIP')
s=$(grep -cE '^ok .*# SKIP' "$tap")
f=$(grep -cE '^not ok ' "$tap")
echo "blktests: $p passed, $s skipped, $f failed"
exit "$status"
