#!/usr/bin/env bash
# `make test`: every test of the project, in order of cost.
#   1. rtags in userspace (cargo unit/property tests, loom, clippy)
#   2. rustfmt --check on all Rust sources, `unsafe` only in rnull/kapi/ with
#      its SAFETY comments, no import cycle among rnull's modules, the
#      benchmark report's unit tests, the kernel's clippy build, kapi's
#      configfs structures against the kernel's header
#   3. build rnull.ko warning-free, the README's parameter table against its
#      .modinfo, and the guest initramfs
#   4. the selftests in a QEMU guest (TAP 13)
#   5. blktests' quick run against rnull in a second guest boot (its device
#      tests and the rnull group, scripts/blktests.sh quick; blktests' skips
#      are shown as TAP skips and counted in neither)
# Prints 'N passed, N failed' last; exits non-zero if anything failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mkdir -p out
passed=0 failed=0 skipped=0

count_cargo() { # sums "test result: ... N passed; M failed" lines
	local p f
	p=$(grep -oE '[0-9]+ passed' "$1" | awk '{s+=$1} END {print s+0}')
	f=$(grep -oE '[0-9]+ failed' "$1" | awk '{s+=$1} END {print s+0}')
	passed=$((passed + p))
	failed=$((failed + f))
}
one() { # one pass/fail check: name, then status
	if [ "$2" = 0 ]; then
		passed=$((passed + 1)); echo "ok: $1"
	else
		failed=$((failed + 1)); echo "FAILED: $1"
	fi
}

# count_tap FILE GUEST-STATUS: add a guest's TAP results to the totals. A
# skipped test ("ok N ... # SKIP") is neither passed nor failed; a guest that
# crashed, hung or logged a splat fails even if its TAP looked fine.
count_tap() {
	local p f
	p=$(grep -E '^ok ' "$1" | grep -cv '# SKIP' || true)
	skipped=$((skipped + $(grep -cE '^ok .*# SKIP' "$1" || true)))
	f=$(grep -cE '^not ok ' "$1" || true)
	passed=$((passed + p)); failed=$((failed + f))
	if [ "$2" != 0 ] && [ "$f" = 0 ]; then failed=$((failed + 1)); echo "FAILED: guest run (status $2)"; fi
}

scripts/test-rtags.sh 2>&1 | tee out/test-rtags.log
rc=${PIPESTATUS[0]}
count_cargo out/test-rtags.log
# A crash before any summary line must still count as a failure.
[ "$rc" = 0 ] || grep -q 'FAILED\|[1-9][0-9]* failed' out/test-rtags.log || failed=$((failed + 1))

make -s fmt-check
one "rustfmt --check" $?

python3 scripts/check-unsafe.py
one "unsafe only in rnull/kapi/, each with SAFETY" $?

python3 scripts/check-imports.py
one "rnull's modules import each other without cycles" $?

# The report generator's tests ("Ran N tests" / "OK" or "FAILED (failures=N)").
/usr/bin/python3 -m unittest discover -s scripts/bench/report >out/test-report.log 2>&1
rrc=$?
n=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' out/test-report.log)
f=$(grep -oE '(failures|errors)=[0-9]+' out/test-report.log | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
if [ -z "$n" ]; then
	tail -n 20 out/test-report.log
	failed=$((failed + 1)); echo "FAILED: bench report tests did not run"
else
	[ "$rrc" = 0 ] || tail -n 30 out/test-report.log
	sk=$(grep -oE 'skipped=[0-9]+' out/test-report.log | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
	passed=$((passed + n - f - sk)); failed=$((failed + f)); skipped=$((skipped + sk))
	echo "bench report tests: $((n - f - sk)) passed, $f failed, $sk skipped"
fi

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

kdir=$(scripts/kernel.sh dir)
[ -z "${KDIR:-}" ] || kdir=$KDIR
base=1
if [ "$rc" = 0 ] && make -s initramfs; then
	scripts/qemu.sh --kdir "$kdir" --name selftests --job scripts/jobs/selftests.sh \
		--env "RNULL_TESTS=${RNULL_TESTS:-}" | tee out/selftests.tap
	count_tap out/selftests.tap "${PIPESTATUS[0]}"
else
	base=0
	one "guest selftests (not run: build failed)" 1
fi


# blktests (from BLKTESTS, default ../shared/blktests), quick run.
if [ "$base" = 1 ] && scripts/initramfs-blktests.sh "$kdir" "${BLKTESTS:-}" >out/initramfs-blktests.log 2>&1; then
	scripts/blktests.sh "$kdir" quick
	count_tap out/blktests-quick.tap $?
else
	[ "$base" = 0 ] || tail -n 5 out/initramfs-blktests.log
	one "blktests in the guest (not run: build failed)" 1
fi

[ "$skipped" = 0 ] || echo "($skipped skipped, counted in neither)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
