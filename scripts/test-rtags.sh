#!/usr/bin/env bash
# Userspace tests of rtags: unit and property tests, loom models, clippy.
# Uses the machine's rustup toolchain, not the kernel's rustc.
set -euo pipefail
cd "$(dirname "$0")/../rtags"
unset RUSTC RUSTFLAGS
status=0
echo "== rtags: cargo test"
cargo test --quiet 2>&1 || status=1
echo "== rtags: loom models"
CARGO_TARGET_DIR=target/loom RUSTFLAGS="--cfg loom" \
	cargo test --quiet --release --test loom --test loom_handoff --test loom_link 2>&1 || status=1
echo "== rtags: clippy"
if cargo clippy --quiet --all-targets -- -D warnings 2>&1; then
	echo "test result: ok. 1 passed; 0 failed (clippy)"
else
	echo "test result: FAILED. 0 passed; 1 failed (clippy)"
	status=1
fi
exit "$status"
