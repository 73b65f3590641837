#!/usr/bin/env bash
# `make check`: every test that needs no kernel; the first step of `make
# test`. In order:
#   1. the userspace crates (scripts/test-rtags.sh: cargo unit and property
#      tests, loom models, clippy)
#   2. rustfmt --check on all Rust sources
#   3. `unsafe` only in rnull/kapi/, each with its SAFETY comment; no import
#      cycle among rnull's modules; selftests/config within the guest
#      kernels' config fragments; `make help` names every target
#   4. the benchmark report's unit tests, the blktests table's self-test
#   5. rustdoc of the userspace crates, warnings denied
#   6. the markdown's links and the README's length (scripts/check-links.py)
# Prints 'N passed, N failed' last; exits non-zero if anything failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mkdir -p out
# shellcheck source=scripts/tally.sh
. scripts/tally.sh

# The loom models run with at most 2 preemptions here (LOOM_MAX_PREEMPTIONS;
# the races they look for need one or two), which keeps `make check` within
# three minutes; `make test` and `make test-rtags` run each model at its own
# bound (unbounded, or 4), as CI does.
LOOM_MAX_PREEMPTIONS=${LOOM_MAX_PREEMPTIONS-2} scripts/test-rtags.sh 2>&1 | tee out/test-rtags.log
count_cargo out/test-rtags.log "${PIPESTATUS[0]}"

make -s fmt-check
one "rustfmt --check" $?

python3 scripts/check-unsafe.py
one "unsafe only in rnull/kapi/, each with SAFETY" $?

python3 scripts/check-imports.py >out/check-imports.log 2>&1
irc=$?
[ "$irc" = 0 ] || cat out/check-imports.log
one "rnull's modules import each other without cycles" "$irc"

# The guest's kernels have every option the selftests need.
missing=$(grep '^CONFIG_' selftests/config 2>/dev/null || echo "selftests/config-is-missing")
missing=$(echo "$missing" |
	grep -vxF -f <(cat scripts/config/base.config scripts/config/debug.config))
[ -z "$missing" ] || echo "selftests/config: not in scripts/config/{base,debug}.config:" $missing
one "selftests/config is in the guest kernels' config fragments" "$([ -z "$missing" ]; echo $?)"

# `make help` names every target of .PHONY (`all` is plain `make`): the
# names are what its "  make ..." lines list before their description.
phony=$(sed -n '/^\.PHONY:/,/^$/p' Makefile | sed 's/^\.PHONY://; s/\\//g')
named=$(make -s help | sed -n 's/^  make \(.*\)/\1/p' | sed 's/  .*//; s/|/ /g; s/\bmake\b/ /g' | tr '\n' ' ')
unnamed=$(for t in $phony; do
	case " all help $named " in *" $t "*) ;; *) echo "$t" ;; esac
done)
[ -z "$unnamed" ] || echo "make help does not name:" $unnamed
one "make help names every target" "$([ -z "$unnamed" ]; echo $?)"

# The system Python: the report's plots need its python3-matplotlib (the
# PNG tests are skipped without it).
/usr/bin/python3 -m unittest discover -s scripts/bench/report >out/test-report.log 2>&1
count_unittest out/test-report.log $? "bench report tests"

python3 scripts/blktests-table.py --self-test
one "blktests' side-by-side table parses run.sh's TAP" $?

scripts/doc.sh crates >out/doc-crates.log 2>&1
drc=$?
[ "$drc" = 0 ] || cat out/doc-crates.log
one "cargo doc of the userspace crates (RUSTDOCFLAGS=-Dwarnings)" "$drc"

if [ -f scripts/check-links.py ]; then
	python3 scripts/check-links.py
	one "markdown links resolve, README within its length" $?
else
	echo "skip: scripts/check-links.py is not there"
fi

tally_end
