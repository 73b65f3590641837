#!/usr/bin/env bash
# Build the blktests layer of the guest: an initramfs archive that
# scripts/qemu.sh --initrd-extra appends to the base one (out/initramfs.cpio.gz;
# later files win). It holds the userland blktests' ./check and its tests
# call (bash, coreutils, util-linux, gawk, kmod, udevadm, blktrace, xfsprogs,
# f2fs-tools, btrfs-progs, dmsetup, cryptsetup, ... copied from the host's
# Debian packages with their shared libraries), the kernel's modules under
# /lib/modules/<release> with depmod's index (so blktests' modprobe/modinfo
# find C null_blk, rnull, scsi_debug, dm, the file systems and the I/O
# schedulers), rnull's null_blk face as /lib/modules/rnull-face/null_blk.ko
# (blktests/run.sh puts it in C null_blk's place for the rnull column), the
# kernel's .config as /boot/config-<release>, and a copy of blktests with
# rnull's own test group (blktests/tests/rnull) added.
#
# usage: scripts/initramfs-blktests.sh KDIR [BLKTESTS]
#   -> out/initramfs-blktests.cpio.gz
# BLKTESTS defaults to ../shared/blktests beside the work tree. It is only
# read: the copy lives in the archive, a build output. MODULES=DIR takes
# rnull.ko and null_blk.ko from DIR/rnull (scripts/module-build.sh) instead
# of the work tree's rnull/.
set -euo pipefail

kdir=$1
top=$(cd "$(dirname "$0")/.." && pwd)
blktests=${2:-${BLKTESTS:-$top/../shared/blktests}}
modules=${MODULES:-$top}/rnull
out="$top/out"
[ -x "$blktests/check" ] || { echo "initramfs-blktests: no blktests at $blktests (BLKTESTS=...)" >&2; exit 1; }
blktests=$(cd "$blktests" && pwd)
# shellcheck source=scripts/env.sh
. "$top/scripts/env.sh"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

# Debian packages whose programs are copied whole (bin and sbin files), and
# single programs from packages that bring much more than blktests needs.
packages=(bash dash coreutils util-linux mount bsdextrautils bsdutils findutils grep sed gawk
	diffutils kmod procps gzip udev blktrace xfsprogs e2fsprogs f2fs-tools btrfs-progs bc dmsetup
	cryptsetup-bin sg3-utils fscrypt)
programs=(/usr/bin/getconf)

# Merged /usr on the host: /bin/x is /usr/bin/x. The guest's /bin and /sbin
# are busybox's, so everything goes under /usr and the blktests job puts
# /usr/sbin:/usr/bin first on PATH.
guest_path() {
	case "$1" in
	/bin/* | /sbin/*) echo "/usr$1" ;;
	*) echo "$1" ;;
	esac
}

bins=()
for pkg in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
		{ echo "initramfs-blktests: Debian package $pkg is missing (make deps)" >&2; exit 1; }
	while IFS= read -r f; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		[ -d "$f" ] && continue
		bins+=("$f")
	done < <(dpkg -L "$pkg" | grep -E '^(/usr)?/s?bin/[^/]+$')
done
bins+=("${programs[@]}")

libs=()
for f in "${bins[@]}"; do
	dst="$root$(guest_path "$f")"
	mkdir -p "$(dirname "$dst")"
	if [ -L "$f" ]; then
		# kmod's modprobe -> /bin/kmod and the like: point at the guest path.
		ln -sfn "$(guest_path "$(realpath "$f")")" "$dst"
		continue
	fi
	cp "$f" "$dst"
	if ldd "$f" >/dev/null 2>&1; then
		while IFS= read -r lib; do libs+=("$lib"); done < <(ldd "$f" | grep -o '/[^ ]*')
	fi
done
for lib in $(printf '%s\n' "${libs[@]}" | sort -u); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
# What scripts name by absolute path or by Debian's alternatives. /bin/sh is
# dash, as on Debian: busybox's sh runs its own applets before PATH (zgrep
# would get busybox's gzip). The guest's init does not replace it.
mkdir -p "$root/bin" "$root/usr/bin"
ln -sfn /usr/bin/bash "$root/bin/bash"
ln -sfn /usr/bin/dash "$root/bin/sh"
ln -sfn /usr/bin/gawk "$root/usr/bin/awk"

# Modules where modprobe looks for them, and the kernel's configuration
# where blktests' _have_kernel_option looks (the kernel has no IKCONFIG).
release=$(cat "$kdir/include/config/kernel.release")
moddir="$root/lib/modules/$release"
make -s -C "$kdir" "${kmake_args[@]}" INSTALL_MOD_PATH="$root" INSTALL_MOD_STRIP=1 \
	DEPMOD=true modules_install
rm -f "$moddir/build" "$moddir/source"
# Under kernel/: blktests' _have_module looks nowhere else.
mkdir -p "$moddir/kernel/drivers/block" "$root/lib/modules/rnull-face" "$root/lib/modules/rnull"
cp "$modules/rnull.ko" "$moddir/kernel/drivers/block/"
cp "$modules/null_blk.ko" "$root/lib/modules/rnull-face/"
# The base archive's copies (built against the base kernel) are replaced
# by this kernel's, for the scripts that insmod them by path.
cp "$modules/rnull.ko" "$root/lib/modules/rnull/"
cp "$modules/null_blk.ko" "$root/lib/modules/rnull/null_blk-rnull.ko"
cp "$kdir/drivers/block/null_blk/null_blk.ko" "$root/lib/modules/rnull/"
/usr/sbin/depmod -b "$root" "$release"
mkdir -p "$root/boot"
cp "$kdir/.config" "$root/boot/config-$release"

# blktests: upstream's files (no .git, no results, no local config), its
# helper programs built here, and rnull's group beside upstream's.
mkdir -p "$root/blktests"
tar -C "$blktests" --exclude=.git --exclude=results --exclude=./config -cf - . | tar -C "$root/blktests" -xf -
# Its helper programs (block/045's bio-full-trim, zbd/001's zbdioctl, ...),
# built by its own Makefile in the guest's copy, static so that they need no
# libraries of the host's. It leaves out what the host cannot build
# (miniublk without liburing) and says so.
make -s -C "$root/blktests/src" -j"$(nproc)" LDFLAGS=-static ||
	{ echo "initramfs-blktests: blktests' src/ did not build" >&2; exit 1; }
cp -r "$top/blktests/tests/rnull" "$root/blktests/tests/rnull"
cp "$top/blktests/run.sh" "$root/blktests/rnull-run.sh"
chmod +x "$root/blktests/tests/rnull/"[0-9][0-9][0-9] "$root/blktests/rnull-run.sh"

mkdir -p "$out"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initramfs-blktests.cpio.gz.tmp"
mv "$out/initramfs-blktests.cpio.gz.tmp" "$out/initramfs-blktests.cpio.gz"
echo "initramfs-blktests: $out/initramfs-blktests.cpio.gz ($(du -h "$out/initramfs-blktests.cpio.gz" | cut -f1)," \
	"blktests $(cat "$blktests/UPSTREAM-COMMIT" 2>/dev/null | cut -c1-12 || echo "from $blktests"))"
