#!/usr/bin/env bash
# `make doc`: rustdoc for the driver (private items included, so the kapi
# abstraction layer is documented) and for the userspace crates. The driver
# is documented with exactly the flags kbuild compiled it with, taken from
# its .cmd file. The crates' warnings are errors.
# usage: scripts/doc.sh KDIR     -> out/doc/rnull/index.html, out/doc-<crate>/doc/...
#        scripts/doc.sh crates   the userspace crates only (`make check`; no kernel)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/out/doc"

# crates: rustdoc of each crate with a Cargo.toml at the top (rtags and
# its siblings), with the machine's toolchain (not the kernel's rustc).
# Private items are documented, so a link to one resolves: that lint is the
# only one allowed, as for the driver.
crates() {
	local toml dir
	for toml in "$top"/*/Cargo.toml; do
		[ -f "$toml" ] || continue
		dir=$(dirname "$toml")
		(cd "$dir" && env -u RUSTC RUSTDOCFLAGS="-Dwarnings -Arustdoc::private_intra_doc_links" cargo doc --quiet --no-deps \
			--document-private-items --target-dir "$top/out/doc-$(basename "$dir")")
		echo "doc: $top/out/doc-$(basename "$dir")/doc/$(basename "$dir")/index.html"
	done
}

case "${1:-}" in
"") echo "usage: scripts/doc.sh KDIR | crates" >&2; exit 2 ;;
crates) crates; exit 0 ;;
esac
kdir=$1
mkdir -p "$out"
cmd=$(sed -n 's/^savedcmd_.*rnull\.o := //p' "$top/rnull/.rnull.o.cmd" | sed 's/ ; .*//')
# Keep the compiler flags, drop the compiler, outputs and codegen-only flags.
flags=()
for w in $cmd; do
	case "$w" in
	RUST_MODFILE=* | */rustc | */clippy-driver | --emit=* | --out-dir | -C* | -Z*cf-protection* | \
		-Ztune-cpu=* | -Zfunction-sections=* | -Zbinary_dep_depinfo=* | -Wclippy::* | -Aclippy::*) ;;
	*) flags+=("$w") ;;
	esac
done
# The flag after --out-dir is its value; drop it too.
clean=()
skip=0
for w in "${flags[@]}"; do
	if [ "$skip" = 1 ]; then skip=0; continue; fi
	case "$w" in */rnull/) continue ;; esac
	clean+=("$w")
done
(cd "$kdir" && RUST_MODFILE="$top/rnull/rnull" RUSTC_BOOTSTRAP=1 /usr/bin/rustdoc "${clean[@]//\'/}" --document-private-items \
	-Arustdoc::private_intra_doc_links -o "$out" 2>&1) | grep -v '^$' || true
test -f "$out/rnull/index.html"
echo "doc: $out/rnull/index.html"
crates
