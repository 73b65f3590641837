# shellcheck shell=bash
# Counting for the test scripts (scripts/check.sh, scripts/test-all.sh).
# Sourced, never run. Every check adds to `passed` and `failed`; a skipped
# test is counted in neither, only in `skipped`. `tally_end` prints
# 'N passed, N failed' last and fails if anything failed.
passed=0 failed=0 skipped=0

# one NAME STATUS: one pass/fail check.
one() {
	if [ "$2" = 0 ]; then
		passed=$((passed + 1)); echo "ok: $1"
	else
		failed=$((failed + 1)); echo "FAILED: $1"
	fi
}

# count_cargo LOG STATUS: sums cargo's "test result: ... N passed; M failed"
# lines. A run that failed before any summary line counts as one failure.
count_cargo() {
	local p f
	p=$(grep -oE '[0-9]+ passed' "$1" | awk '{s+=$1} END {print s+0}')
	f=$(grep -oE '[0-9]+ failed' "$1" | awk '{s+=$1} END {print s+0}')
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$2" = 0 ] || [ "$f" != 0 ] || { failed=$((failed + 1)); echo "FAILED: $1 (status $2)"; }
}

# count_unittest LOG STATUS NAME: Python unittest's "Ran N tests" and
# "FAILED (failures=N, errors=N, skipped=N)" / "OK (skipped=N)".
count_unittest() {
	local n f sk
	n=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$1")
	if [ -z "$n" ]; then
		tail -n 20 "$1"
		failed=$((failed + 1)); echo "FAILED: $3 did not run"
		return
	fi
	[ "$2" = 0 ] || tail -n 30 "$1"
	f=$(grep -oE '(failures|errors)=[0-9]+' "$1" | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
	sk=$(grep -oE 'skipped=[0-9]+' "$1" | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
	[ "$2" = 0 ] || [ "$f" != 0 ] || f=1
	passed=$((passed + n - f - sk)); failed=$((failed + f)); skipped=$((skipped + sk))
	echo "$3: $((n - f - sk)) passed, $f failed, $sk skipped"
}

# count_tap FILE GUEST-STATUS: a guest's TAP results. A skipped test
# ("ok N ... # SKIP") is neither passed nor failed; a guest that crashed,
# hung or logged a splat fails even if its TAP looked fine.
count_tap() {
	local p f
	if [ ! -s "$1" ]; then
		failed=$((failed + 1)); echo "FAILED: guest run (no TAP in $1, status $2)"
		return
	fi
	p=$(grep -E '^ok ' "$1" | grep -cv '# SKIP' || true)
	skipped=$((skipped + $(grep -cE '^ok .*# SKIP' "$1" || true)))
	f=$(grep -cE '^not ok ' "$1" || true)
	passed=$((passed + p)); failed=$((failed + f))
	if [ "$2" != 0 ] && [ "$f" = 0 ]; then failed=$((failed + 1)); echo "FAILED: guest run (status $2)"; fi
}

# count_summary LOG STATUS PREFIX: the totals another tally script printed
# last, its lines starting with PREFIX (its TALLY_PREFIX).
count_summary() {
	local line p f sk
	line=$(grep -E "^$3[0-9]+ passed, [0-9]+ failed\$" "$1" | tail -n 1)
	line=${line#"$3"}
	if [ -z "$line" ]; then
		failed=$((failed + 1)); echo "FAILED: $1 has no summary (status $2)"
		return
	fi
	read -r p _ f _ <<<"$line"
	sk=$(sed -n "s/^$3(\\([0-9]*\\) skipped, counted in neither)\$/\\1/p" "$1" | tail -n 1)
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + ${sk:-0}))
	[ "$2" = 0 ] || [ "$f" != 0 ] || { failed=$((failed + 1)); echo "FAILED: $1 (status $2)"; }
}

# tally_end: the totals, last, after $TALLY_PREFIX if set; fails if
# anything failed.
tally_end() {
	local prefix=${TALLY_PREFIX:-}
	[ "$skipped" = 0 ] || echo "$prefix($skipped skipped, counted in neither)"
	echo "$prefix$passed passed, $failed failed"
	[ "$failed" = 0 ]
}
