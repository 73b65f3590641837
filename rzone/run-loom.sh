#!/bin/sh
# Model-check the lock-free zone protocol with loom (see tests/loom.rs).
set -e
cd "$(dirname "$0")"
RUSTFLAGS="--cfg loom" cargo test --release --test loom "$@"
