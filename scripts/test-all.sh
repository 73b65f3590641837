#!/usr/bin/env bash
# `make test`: every test of the project, in order of cost.
#   1. `make check`: everything that needs no kernel (scripts/check.sh: the
#      userspace crates' tests, loom and clippy, rustfmt, the unsafe and
#      import checks, the benchmark report's tests, the crates' rustdoc,
#      the markdown's links)
#   2. the kernel's clippy build of the module, kapi's configfs and
#      badblocks structures against the kernel's headers
#   3. build rnull.ko warning-free, the README's parameter table against its
#      .modinfo, and the guest initramfs
#   4. the selftests in a QEMU guest (TAP 13)
#   5. blktests' quick run in a second guest boot: its device tests on
#      rnull, the rnull group and a few null_blk tests with C null_blk and
#      with rnull as null_blk (scripts/blktests.sh quick; blktests' skips
#      are shown as TAP skips and counted in neither). The base kernel has
#      what these need; `make blktests` runs the rest on the blktests one.
# Prints 'N passed, N failed' last; exits non-zero if anything failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mkdir -p out
# shellcheck source=scripts/tally.sh
. scripts/tally.sh

# Its totals are added to these; its summary line says "check: ", so that
# the last 'N passed, N failed' line is the whole run's.
# LOOM_MAX_PREEMPTIONS empty: every loom model at its own bound.
LOOM_MAX_PREEMPTIONS=${LOOM_MAX_PREEMPTIONS-} TALLY_PREFIX="check: " scripts/check.sh 2>&1 | tee out/check.log
count_summary out/check.log "${PIPESTATUS[0]}" "check: "

# The kernel's clippy build of the module, warnings as errors.
make -s clippy >out/clippy.log 2>&1
crc=$?
[ "$crc" = 0 ] || tail -n 30 out/clippy.log
one "make clippy (CLIPPY=1, -Dwarnings)" "$crc"

# kapi's hand-written configfs and badblocks declarations against the
# kernel's headers.
kdir=$(scripts/kernel.sh dir)
[ -z "${KDIR:-}" ] || kdir=$KDIR
python3 scripts/check-configfs-layout.py "$kdir"
one "kapi's configfs and badblocks declarations match configfs.h and badblocks.h (bindgen)" $?

# Warnings are errors for the module build: the kernel prints them to stderr.
make -s modules 2>&1 | tee out/build.log
rc=${PIPESTATUS[0]}
if [ "$rc" = 0 ] && grep -qE '^(warning|error)' out/build.log; then rc=1; fi
one "rnull.ko builds warning-free" "$rc"

python3 scripts/param-table.py --check README.md rnull/rnull.ko
one "README's parameter table matches rnull.ko's .modinfo" $?

base=1
if [ "$rc" = 0 ] && make -s initramfs; then
	scripts/qemu.sh --kdir "$kdir" --name selftests --job scripts/jobs/selftests.sh \
		--env "RNULL_TESTS=${RNULL_TESTS:-}" --env "RNULL_TEST_TIMEOUT=${RNULL_TEST_TIMEOUT:-}" |
		tee out/selftests.tap
	count_tap out/selftests.tap "${PIPESTATUS[0]}"
else
	base=0
	one "guest selftests (not run: build failed)" 1
fi

# blktests (from BLKTESTS, default ../shared/blktests), quick run.
if [ "$base" = 1 ]; then
	MODULES=$top scripts/blktests.sh "$kdir" quick
	count_tap out/blktests-quick.tap $?
else
	one "blktests in the guest (not run: build failed)" 1
fi

tally_end
