#!/usr/bin/env bash
# `make doc`: rustdoc for the driver (private items included, so the kapi
# abstraction layer is documented) and for rtags and rdisk. The driver is
# documented with exactly the flags kbuild compiled it with, taken from its
# .cmd file.
# usage: scripts/doc.sh KDIR   -> out/doc/rnull/, out/doc-rtags/, out/doc-rdisk/
set -euo pipefail
kdir=$1
top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/out/doc"
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
for crate in rtags rdisk; do
	(cd "$top/$crate" && env -u RUSTC cargo doc --quiet --no-deps --document-private-items \
		--target-dir "$top/out/doc-$crate")
	echo "doc: $top/out/doc-$crate/doc/$crate/index.html"
done
echo "doc: $out/rnull/index.html"
