#!/usr/bin/env bash
# Userspace tests of the no_std crates rtags, rdisk and rzone: unit and
# property tests, rtags' and rzone's loom models, clippy on each. Uses the
# machine's rustup toolchain, not the kernel's rustc.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
unset RUSTC RUSTFLAGS
# loom takes LOOM_MAX_PREEMPTIONS as a bound for every model; empty or
# unset, each model keeps its own.
[ -n "${LOOM_MAX_PREEMPTIONS:-}" ] || unset LOOM_MAX_PREEMPTIONS
status=0
# One target directory for the three crates (and one for their loom
# builds): their dev-dependencies are then compiled once, not per crate,
# which is most of a cold `make check`.
export CARGO_TARGET_DIR="$top/target/check"
loom_target="$top/target/loom"

# clippy CRATE: a pass/fail line in cargo's `test result:` form, which
# test-all.sh counts.
clippy() {
	echo "== $1: clippy"
	if (cd "$top/$1" && cargo clippy --quiet --all-targets -- -D warnings 2>&1); then
		echo "test result: ok. 1 passed; 0 failed (clippy $1)"
	else
		echo "test result: FAILED. 0 passed; 1 failed (clippy $1)"
		status=1
	fi
}

cd "$top/rtags"
echo "== rtags: cargo test"
cargo test --quiet 2>&1 || status=1
echo "== rtags: loom models"
CARGO_TARGET_DIR=$loom_target RUSTFLAGS="--cfg loom" \
	cargo test --quiet --release --test loom --test loom_handoff --test loom_link 2>&1 || status=1
clippy rtags

cd "$top/rdisk"
echo "== rdisk: cargo test"
cargo test --quiet 2>&1 || status=1
clippy rdisk

cd "$top/rzone"
echo "== rzone: cargo test"
cargo test --quiet 2>&1 || status=1
echo "== rzone: loom models"
CARGO_TARGET_DIR=$loom_target RUSTFLAGS="--cfg loom" \
	cargo test --quiet --release --test loom 2>&1 || status=1
clippy rzone
exit "$status"
