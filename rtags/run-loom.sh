#!/bin/sh
# Model-check the lock-free protocols with loom (see tests/loom.rs).
set -e
cd "$(dirname "$0")"
RUSTFLAGS="--cfg loom" cargo test --release --test loom --test loom_handoff --test loom_link "$@"
