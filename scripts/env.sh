# shellcheck shell=bash
# Shared settings for every script: toolchain paths and the kernel cache.
# Sourced, never run. Every value can be overridden from the environment.

# The kernel's Rust support needs the Debian rustc-web toolchain and its
# library sources; rustup's rustc on PATH has no rust-src component.
: "${RUSTC:=/usr/bin/rustc}"
: "${RUST_LIB_SRC:=/usr/src/rustc-1.96.0/library}"
: "${BINDGEN_VERSION:=0.69.5}"
: "${BINDGEN_ROOT:=/opt/bindgen}"
: "${BINDGEN:=$BINDGEN_ROOT/bin/bindgen}"
# Built kernels live outside the work tree, one directory per cache key.
: "${RNULL_CACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/rnull}"
export RUSTC RUST_LIB_SRC BINDGEN RNULL_CACHE

# Arguments every kernel make (in-tree or M=) gets.
kmake_args=(LLVM=1 "RUSTC=$RUSTC" "BINDGEN=$BINDGEN" "RUST_LIB_SRC=$RUST_LIB_SRC")

# cached DIR DONE NAME: takes the build lock of cache entry DIR (fd 9,
# held until the caller exits: one build per key at a time, a second
# caller waits, then reuses) and succeeds if DONE, the mark of a finished
# build, is there.
cached() {
	# `cached ... && return 0` turns `set -e` off in here: every step that
	# must not fail exits itself.
	mkdir -p "$RNULL_CACHE" || exit 1
	exec 9>"$1.lock" || exit 1
	flock 9 || exit 1
	[ -e "$2" ] || return 1
	echo "$3: cached build $1" || true
}
