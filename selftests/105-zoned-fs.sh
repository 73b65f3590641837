#!/bin/sh
# f2fs and btrfs on a zoned, memory-backed configfs rnull (16 MiB zones,
# 8 of them conventional for f2fs's metadata; btrfs writes its data with
# zone appends): mkfs, mount, files written with their checksums (some
# overwritten, one removed), unmount, a power cycle through configfs that
# keeps the data and the zones, mount, every checksum verified, more
# written at the kept write pointers, unmount and the file system's own
# check. Needs the file systems and their mkfs (the blktests guest:
# `make test-guest-blktests RNULL_TESTS=105`); skips naming what is missing.
. "$(dirname "$0")/lib.sh"

# kmod's modprobe where there is one: busybox's does not load btrfs's
# dependencies.
modprobe=modprobe
[ ! -x /usr/sbin/modprobe ] || modprobe=/usr/sbin/modprobe
missing=""
for fs in f2fs btrfs; do
	grep -qw "$fs" /proc/filesystems || $modprobe "$fs" 2>/dev/null
	grep -qw "$fs" /proc/filesystems || missing="$missing $fs (CONFIG_$(echo "$fs" | tr a-z A-Z)_FS)"
	command -v "mkfs.$fs" >/dev/null || missing="$missing mkfs.$fs"
done
command -v fsck.f2fs >/dev/null || missing="$missing fsck.f2fs"
command -v btrfs >/dev/null || missing="$missing btrfs (btrfs-progs)"
[ -z "$missing" ] || skip "requires$missing"

load_rnull nr_devices=0
cfs=/sys/kernel/config/rnull
d=$cfs/zfs
mnt=/tmp/zfs-mnt
mkdir -p $mnt
cleanup_fs() {
	umount $mnt 2>/dev/null
	cleanup_rnull
}
trap cleanup_fs EXIT

# make_files DIR N: N files of random data in DIR, a few overwritten and
# one removed, as a file system's log and cleaner see them.
make_files() {
	mkdir -p "$1/sub" || fail "mkdir $1/sub"
	i=0
	while [ $i -lt "$2" ]; do
		head -c $(((i % 5 + 1) * 1048576 + i * 4096)) /dev/urandom >"$1/f$i" || fail "write $1/f$i"
		head -c 12345 /dev/urandom >"$1/sub/s$i" || fail "write $1/sub/s$i"
		i=$((i + 1))
	done
	head -c 3145728 /dev/urandom >"$1/f1" || fail "overwrite $1/f1"
	rm "$1/f2" || fail "rm $1/f2"
}

for fs in f2fs btrfs; do
	mkdir $d || fail "mkdir $d"
	echo 1024 >$d/size && echo 1 >$d/memory_backed && echo 1 >$d/zoned &&
		echo 16 >$d/zone_size && echo 8 >$d/zone_nr_conv || fail "$fs: zoned settings"
	echo 1 >$d/power || fail "$fs: power on"
	dev=/dev/rnullb$(cat $d/index)
	# Native zone append (btrfs's data writes reach the driver as such).
	[ "$(cat /sys/block/rnullb$(cat $d/index)/queue/zone_append_max_bytes)" -gt 0 ] ||
		fail "$fs: no native zone append"
	case $fs in
	f2fs) out=$(mkfs.f2fs -f -m "$dev" 2>&1) ;;
	btrfs) out=$(mkfs.btrfs -f "$dev" 2>&1) ;;
	esac || fail "mkfs.$fs $dev: $out"
	mount -t $fs "$dev" $mnt || fail "mount -t $fs $dev: $(dmesg | tail -n 5)"
	make_files $mnt 12
	(cd $mnt && find . -type f | sort | xargs sha256sum) >/tmp/zfs.sums || fail "$fs: checksums"
	expect_eq "$(wc -l </tmp/zfs.sums)" 23 "$fs: files written"
	umount $mnt || fail "$fs: umount"

	# A power cycle: the data and the zones stay with the directory.
	echo 0 >$d/power || fail "$fs: power off"
	[ ! -e "$dev" ] || fail "$fs: $dev still there after power off"
	echo 1 >$d/power || fail "$fs: power on again"
	mount -t $fs "$dev" $mnt || fail "$fs: mount after the power cycle: $(dmesg | tail -n 5)"
	(cd $mnt && sha256sum -c /tmp/zfs.sums >/tmp/zfs.check 2>&1) ||
		fail "$fs: checksums after the power cycle: $(grep -v ': OK$' /tmp/zfs.check | head -n 5)"
	log "ok: $fs: $(wc -l </tmp/zfs.sums) files verified after a power cycle"
	# Writes go on at the write pointers the zones kept.
	head -c 5242880 /dev/urandom >$mnt/after || fail "$fs: write after the power cycle"
	(cd $mnt && sha256sum after) >>/tmp/zfs.sums
	sync
	umount $mnt || fail "$fs: umount after the power cycle"
	case $fs in
	f2fs) out=$(fsck.f2fs "$dev" 2>&1) ;;
	btrfs) out=$(btrfs check --readonly "$dev" 2>&1) ;;
	esac || fail "$fs: the file system's check failed: $(echo "$out" | tail -n 15)"
	mount -t $fs "$dev" $mnt || fail "$fs: mount after the check"
	(cd $mnt && sha256sum -c /tmp/zfs.sums >/tmp/zfs.check 2>&1) ||
		fail "$fs: checksums after the check: $(grep -v ': OK$' /tmp/zfs.check | head -n 5)"
	umount $mnt || fail "$fs: last umount"
	log "ok: $fs: written after the power cycle, checked, verified"
	echo 0 >$d/power && rmdir $d || fail "$fs: power off, rmdir"
done
unload_rnull
