#!/usr/bin/env bash
# Build the guest's base initramfs: busybox, fio and blkzone with their
# libraries, the modules (rnull, C null_blk, in-tree rnull_mod, the
# mq-deadline and bfq schedulers) and the selftests.
# usage: scripts/initramfs.sh KDIR   -> out/initramfs.cpio.gz
# MODULES=DIR takes rnull's modules from DIR/rnull (scripts/module-build.sh)
# instead of the work tree's rnull/.
set -euo pipefail

kdir=$1
top=$(cd "$(dirname "$0")/.." && pwd)
modules=${MODULES:-$top}/rnull
out="$top/out"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,etc,root,job,lib/modules/rnull,usr/bin}
# mktemp's 0700 would become the guest's /: only root could reach /bin/sh,
# and every `su nobody` permission check would fail for that reason alone.
chmod 755 "$root"
chmod 1777 "$root/tmp"
cp /bin/busybox "$root/bin/busybox"
cp "$top/scripts/guest/init" "$root/init"
chmod +x "$root/init"

# fio, util-linux's blkzone (zone reports and management for the zoned
# selftests; busybox has none), and every shared library they load, at
# the same paths.
mkdir -p "$root/usr/sbin"
cp /usr/bin/fio "$root/usr/bin/fio"
cp /usr/sbin/blkzone "$root/usr/sbin/blkzone"
for lib in $(for p in /usr/bin/fio /usr/sbin/blkzone; do ldd "$p"; done | grep -o '/[^ ]*' | sort -u); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done

cp "$modules/rnull.ko" "$root/lib/modules/rnull/"
cp "$modules/null_blk.ko" "$root/lib/modules/rnull/null_blk-rnull.ko"
cp "$kdir/drivers/block/null_blk/null_blk.ko" "$root/lib/modules/rnull/"
cp "$kdir/drivers/block/rnull_mod.ko" "$root/lib/modules/rnull/"
# The I/O schedulers built as modules (kyber is built in), for the slice
# benchmark's side-by-side runs.
for s in mq-deadline bfq; do
	cp "$kdir/block/$s.ko" "$root/lib/modules/rnull/"
done

cp -r "$top/selftests" "$root/selftests"
# The stress engine (`make stress`, selftest 098).
cp -r "$top/scripts/stress/guest" "$root/stress"
# The selftests' helper programs (linked against the libc copied for fio).
for src in "$top"/selftests/tools/*.c; do
	clang -O2 -Wall -o "$root/usr/bin/$(basename "$src" .c)" "$src"
done
mkdir -p "$root/bench"
cp -r "$top/bench/jobs" "$root/bench/jobs"

# A non-root user for permission tests.
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"

mkdir -p "$out"
# The same bytes from the same files: no build times, inode numbers or
# directory order of the host's. The guest unpacks the archive on virtual
# time (scripts/qemu.sh), and on several vCPUs a few instructions more or
# less there change the order in which the vCPUs take turns for the rest of
# the run, so a benchmark would not repeat.
find "$root" -exec touch -h -d @0 {} +
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet --reproducible | gzip -n -1) \
	>"$out/initramfs.cpio.gz.tmp"
mv "$out/initramfs.cpio.gz.tmp" "$out/initramfs.cpio.gz"
echo "initramfs: $out/initramfs.cpio.gz ($(du -h "$out/initramfs.cpio.gz" | cut -f1))"
