#!/usr/bin/env bash
# Build (or reuse) the Rust-enabled guest kernel.
#
#   scripts/kernel.sh key     print the cache key
#   scripts/kernel.sh dir     print the build directory for that key
#   scripts/kernel.sh build   build it unless a finished build is cached
#
# FLAVOUR=debug adds scripts/config/debug.config on top of the base fragment.
# The key hashes every input of the build: the kernel source package version,
# the toolchain versions, the config fragments and RECIPE (bump it when the
# way the kernel is configured or built below changes).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/env.sh
. "$here/env.sh"

flavour=${FLAVOUR:-base}
fragments=("$here/config/base.config")
[ "$flavour" = base ] || fragments+=("$here/config/$flavour.config")

RECIPE=1

key() {
	{
		echo "flavour=$flavour"
		dpkg-query -W -f='${Version}\n' linux-source-6.12 2>/dev/null || echo nosrc
		"$RUSTC" --version 2>/dev/null || echo norustc
		"$BINDGEN" --version 2>/dev/null || echo nobindgen
		clang --version 2>/dev/null | head -n1 || echo noclang
		echo "recipe=$RECIPE"
		cat "${fragments[@]}"
	} | sha256sum | cut -c1-16
}

dir() { echo "$RNULL_CACHE/kernel-$flavour-$(key)"; }

build() {
	local out src log
	out=$(dir)
	cached "$out" "$out/.rnull-done" kernel && return 0
	src="$RNULL_CACHE/src/linux-source-6.12"
	if [ ! -f "$src/Makefile" ]; then
		echo "kernel: unpacking linux-source-6.12 into $RNULL_CACHE/src"
		mkdir -p "$RNULL_CACHE/src"
		tar -C "$RNULL_CACHE/src" -xf /usr/src/linux-source-6.12.tar.xz
	fi
	mkdir -p "$out"
	log="$out/build.log"
	echo "kernel: building $flavour kernel in $out (log: $log)"
	local start=$SECONDS
	make -s -C "$src" O="$out" "${kmake_args[@]}" tinyconfig >"$log" 2>&1
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
		"${fragments[@]}" >>"$log" 2>&1
	make -s -C "$src" O="$out" "${kmake_args[@]}" olddefconfig >>"$log" 2>&1
	check_config "$out/.config"
	if ! make -C "$src" O="$out" "${kmake_args[@]}" -j"$(nproc)" \
		bzImage modules >>"$log" 2>&1; then
		tail -n 40 "$log"
		echo "kernel: build failed, full log in $log" >&2
		return 1
	fi
	touch "$out/.rnull-done"
	echo "kernel: built in $((SECONDS - start)) s"
}

# Every fragment line must have survived olddefconfig; a dropped symbol
# means a missing dependency and a guest that silently lacks a feature.
check_config() {
	local config=$1 bad=0 line sym
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) grep -qxF "$line" "$config" || { echo "kernel: config lost $line" >&2; bad=1; } ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			! grep -q "^$sym=" "$config" || { echo "kernel: config has $sym set" >&2; bad=1; } ;;
		esac
	done < <(cat "${fragments[@]}")
	return "$bad"
}

case "${1:-build}" in
key) key ;;
dir) dir ;;
build) build ;;
*) echo "usage: $0 key|dir|build" >&2; exit 2 ;;
esac
