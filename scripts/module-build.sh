#!/usr/bin/env bash
# Build the modules against a kernel other than the default one, in a
# build directory of their own, so that rnull/rnull.ko (built against the
# default kernel by `make modules`) is not rebuilt back and forth.
#
# usage: scripts/module-build.sh KDIR DIR   -> DIR/rnull/*.ko
#
# DIR gets a copy of what Kbuild compiles (Kbuild, rnull/ and the sources
# of the crates it includes by path) with the sources' modification times,
# so an unchanged source is not recompiled by the next call.
set -euo pipefail

kdir=$1 dir=$2
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/env.sh
. "$top/scripts/env.sh"

mkdir -p "$dir"
(
	cd "$top"
	# The crates beside the driver: every directory with a Cargo.toml.
	srcs=(Kbuild rnull)
	for c in */Cargo.toml; do srcs+=("${c%/Cargo.toml}/src"); done
	tar -c --exclude='*.o' --exclude='*.ko' --exclude='*.mod' --exclude='*.mod.c' \
		--exclude='.*.cmd' --exclude='*.rmeta' --exclude='.*.d' --exclude=modules.order \
		"${srcs[@]}"
) | tar -C "$dir" -x
make -s -C "$kdir" M="$(cd "$dir" && pwd)" "${kmake_args[@]}" modules
