#!/usr/bin/env bash
# Boot the guest with the blktests layer (out/initramfs-blktests.cpio.gz, from
# scripts/initramfs-blktests.sh) and run blktests against rnull
# (blktests/run.sh in the guest). TAP goes to stdout and to out/blktests.tap
# (full) or out/blktests-quick.tap (quick), the null_blk tests' side-by-side
# table (scripts/blktests-table.py) to out/blktests-null_blk.md; the last
# line is 'N passed, N skipped, N failed'.
#
# usage: scripts/blktests.sh KDIR full|quick|selftests
# KDIR is the blktests kernel (FLAVOUR=blktests scripts/kernel.sh dir) or
# one like it; the modules are built against it in out/module-blktests
# (scripts/module-build.sh) and the guest's two archives from them.
# MODULES=DIR takes modules already built against KDIR from DIR/rnull
# instead (`make test`: the work tree's, on the base kernel).
#   full:  every listed device test under each rnull configuration, timed
#          tests limited to TIMEOUT (30 s), the rnull group, then every
#          blktests test that uses null_blk, with C null_blk and with rnull
#          as null_blk (`make blktests`)
#   quick: blktests' quick run (`./check -q 3`) on one configuration, the
#          rnull group and a few null_blk tests under both drivers likewise
#          (`make test`)
#   selftests: the selftests (RNULL_TESTS, as for `make test-guest`) in
#          the same guest, for those that need its userland or its
#          kernel's file systems (`make test-guest-blktests`)
# Overrides: TESTS, GROUP_TESTS, NULL_BLK_TESTS ("none" for none),
# NULL_BLK_DRIVERS, QUICK, TIMEOUT, RNULL_BLKTESTS_CONFIGS, and
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
	# Every null_blk test twice takes about an hour under TCG.
	export RNULL_TIMEOUT=${RNULL_TIMEOUT:-7200}
	;;
quick)
	configs=${RNULL_BLKTESTS_CONFIGS:-$mem}
	quick=${QUICK:-3}
	tap=out/blktests-quick.tap
	# rnull/001 and rnull/004 compare wall-clock IOPS between modes: on a
	# loaded TCG host a run varies several-fold, so `make test` (which must
	# not depend on speed) leaves them to `make blktests`.
	group_default="rnull/002 rnull/003"
	# blktests' null_blk tests that pass on both drivers in the full run
	# and take seconds, with nothing the base kernel lacks (block/017 and
	# 018 sample counters and times, which a loaded host skews).
	null_blk_default="block/021 zbd/001 zbd/002 zbd/003 zbd/004 zbd/005 zbd/006"
	;;
selftests) tap=out/selftests-blktests.tap ;;
*) echo "blktests.sh: mode is full, quick or selftests, not $mode" >&2; exit 2 ;;
esac

modules=${MODULES:-}
if [ -z "$modules" ]; then
	modules=out/module-blktests
	scripts/module-build.sh "$kdir" "$modules" || exit 1
fi
MODULES=$modules scripts/initramfs.sh "$kdir" >/dev/null || exit 1
MODULES=$modules scripts/initramfs-blktests.sh "$kdir" "${BLKTESTS:-}" || exit 1

mkdir -p out
if [ "$mode" = selftests ]; then
	scripts/qemu.sh --kdir "$kdir" --name selftests-blktests --job scripts/jobs/selftests.sh \
		--initrd-extra out/initramfs-blktests.cpio.gz --env "RNULL_TESTS=${RNULL_TESTS:-}" \
		--env "RNULL_TEST_TIMEOUT=${RNULL_TEST_TIMEOUT:-}" | tee "$tap"
	status=${PIPESTATUS[0]}
	echo "$(grep -c '^ok ' "$tap") passed, $(grep -c '^not ok ' "$tap") failed"
	exit "$status"
fi
extra_env=()
for kv in ${BLKTESTS_ENV:-}; do extra_env+=(--env "$kv"); done
scripts/qemu.sh --kdir "$kdir" --name "blktests-$mode" --job scripts/jobs/blktests.sh \
	--initrd-extra out/initramfs-blktests.cpio.gz \
	--env "BLKTESTS_DEVICE_TESTS=${TESTS:-}" \
	--env "BLKTESTS_GROUP_TESTS=${GROUP_TESTS-${group_default:-rnull}}" \
	--env "BLKTESTS_NULL_BLK_TESTS=${NULL_BLK_TESTS-${null_blk_default:-all}}" \
	--env "BLKTESTS_NULL_BLK_DRIVERS=${NULL_BLK_DRIVERS:-null_blk rnull}" \
	--env "BLKTESTS_QUICK=$quick" \
	--env "BLKTESTS_TIMEOUT=${TIMEOUT:-30}" \
	--env "RNULL_BLKTESTS_CONFIGS=$configs" "${extra_env[@]}" | tee "$tap"
status=${PIPESTATUS[0]}
p=$(grep -E '^ok ' "$tap" | grep -cv '# SKIP')
s=$(grep -cE '^ok .*# SKIP' "$tap")
f=$(grep -cE '^not ok ' "$tap")
python3 scripts/blktests-table.py "$tap" >out/blktests-null_blk.md && cat out/blktests-null_blk.md
echo "blktests: $p passed, $s skipped, $f failed"
exit "$status"
