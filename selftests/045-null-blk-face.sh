#!/bin/sh
# The null_blk face (rnull built as null_blk.ko, in the guest as
# null_blk-rnull.ko) answers to C null_blk's names, beside rnull's own:
# module null_blk with rnull's parameters, configfs nullb and its features,
# a configfs directory nullb1 making /dev/nullb1 that serves I/O, log lines
# prefixed null_blk. The face and C null_blk refuse each other, leaving the
# loaded one as it was.
. "$(dirname "$0")/lib.sh"

FACE_KO=$RNULL_MODDIR/null_blk-rnull.ko
C_KO=$RNULL_MODDIR/null_blk.ko
requires_file "$FACE_KO"
requires_file "$C_KO"
cfs=/sys/kernel/config/nullb
mod=/sys/module/null_blk

cleanup_face() {
	for d in "$cfs"/*/; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	rmmod null_blk 2>/dev/null
	cleanup_rnull
}
trap cleanup_face EXIT

nullb_disks() { ls /sys/block | grep '^nullb' | tr '\n' ' '; }

[ ! -d $mod ] || fail "null_blk is loaded before the test"

# rnull's own names stay its own: it loads beside the face.
load_rnull nr_devices=0
rnull_params=$(ls /sys/module/rnull/parameters | tr '\n' ' ')

kmsg_mark
insmod "$FACE_KO" nr_devices=0 || fail "insmod the face failed"
[ -d $mod ] || fail "$mod missing after insmod"
[ -d /sys/module/rnull ] || fail "rnull gone after loading the face"
expect_eq "$(ls $mod/parameters | tr '\n' ' ')" "$rnull_params" "the face's parameters"
# The names of null_blk's that rnull implements; checked against C
# null_blk's own list below.
shared="nr_devices submit_queues poll_queues hw_queue_depth bs gb irqmode completion_nsec
	memory_backed cache_size shared_tags blocking max_sectors mbps"
for p in $shared; do
	[ -r $mod/parameters/$p ] || fail "$mod/parameters/$p missing"
done
expect_eq "$(cat $mod/parameters/nr_devices)" 0 "$mod/parameters/nr_devices"
kmsg_since | grep -q 'null_blk: 0 device(s)' || fail "no load line prefixed null_blk:"
[ -d $cfs ] || fail "$cfs missing"
[ -d /sys/kernel/config/rnull ] || fail "rnull's configfs gone"
expect_eq "$(nullb_disks)" "" "nullb disks with nr_devices=0"

features=$(cat $cfs/features) || fail "read $cfs/features"
[ -n "$features" ] || fail "$cfs/features is empty"
expect_eq "$features" "$(cat /sys/kernel/config/rnull/features)" "$cfs/features"

d=$cfs/nullb1
mkdir $d || fail "mkdir $d"
echo 64 >$d/size || fail "size=64"
echo 1 >$d/memory_backed || fail "memory_backed=1"
echo 1 >$d/power || fail "power=1"
[ -b /dev/nullb1 ] || fail "/dev/nullb1 missing after power=1 (disks: $(nullb_disks))"
expect_eq "$(cat /sys/block/nullb1/size)" $((64 << 11)) "nullb1's size in sectors"
[ -d /sys/block/nullb1/rnull ] || fail "/sys/block/nullb1/rnull missing"
expect_eq "$(ls /sys/block | grep -c '^rnullb')" 0 "rnull disks"
out=$(fio_terse --name=face --filename=/dev/nullb1 --direct=1 --rw=randrw \
	--bs=4k --ioengine=io_uring --iodepth=8 --verify=crc32c --size=8M) ||
	fail "fio failed on /dev/nullb1"
expect_eq "$(echo "$out" | terse_field 5)" 0 "fio error"
dd if=/dev/urandom of=/tmp/face.in bs=4096 count=16 2>/dev/null
dd if=/tmp/face.in of=/dev/nullb1 bs=4096 seek=100 oflag=direct 2>/dev/null ||
	fail "dd write to /dev/nullb1"
dd if=/dev/nullb1 of=/tmp/face.out bs=4096 skip=100 count=16 iflag=direct 2>/dev/null ||
	fail "dd read from /dev/nullb1"
cmp -s /tmp/face.in /tmp/face.out || fail "/dev/nullb1 read back other data"
rm -f /tmp/face.in /tmp/face.out
echo 0 >$d/power || fail "power=0"
[ ! -e /sys/block/nullb1 ] || fail "nullb1 left after power=0"
rmdir $d || fail "rmdir $d"
# Any directory name is the disk's, as null_blk's; log lines use it.
d=$cfs/face_disk
mkdir $d || fail "mkdir $d"
echo 16 >$d/size || fail "size=16"
echo 1 >$d/power || fail "power=1 on $d"
[ -b /dev/face_disk ] || fail "/dev/face_disk missing (disks: $(nullb_disks))"
kmsg_mark
if echo x >/sys/block/face_disk/rnull/completion_nsec 2>/dev/null; then fail "completion_nsec=x accepted"; fi
kmsg_since | grep -q 'face_disk/rnull/completion_nsec' || fail "no log line naming face_disk"
rmdir $d || fail "rmdir $d"
[ ! -e /sys/block/face_disk ] || fail "face_disk left after rmdir"
rmmod null_blk || fail "rmmod the face"
[ ! -d $mod ] || fail "$mod left after rmmod"
[ ! -d $cfs ] || fail "$cfs left after rmmod"

# Disk names, C null_blk's and the face's alike: mkdir of an existing
# disk's name fails with EEXIST (nullb_group_make_group()), and a
# directory's name is cut to DISK_NAME_LEN - 1 = 31 bytes for its disk.
long=abcdefghijklmnopqrstuvwxyz0123456789
short=abcdefghijklmnopqrstuvwxyz01234
refused_exists() { # WHAT DIR
	if mkdir "$2" 2>/tmp/face.err; then fail "$1: mkdir $2 beside a disk of its name"; fi
	grep -q 'File exists' /tmp/face.err || fail "$1: mkdir $2 refused otherwise: $(cat /tmp/face.err)"
}
for ko in "$C_KO" "$FACE_KO"; do
	what=${ko##*/}
	insmod "$ko" nr_devices=1 || fail "insmod $what nr_devices=1"
	[ -b /dev/nullb0 ] || fail "$what: /dev/nullb0 missing with nr_devices=1"
	refused_exists "$what" $cfs/nullb0
	mkdir $cfs/$long || fail "$what: mkdir $long"
	echo 1 >$cfs/$long/power || fail "$what: power=1 on $long"
	[ -b /dev/$short ] || fail "$what: /dev/$short missing (disks: $(ls /sys/block | tr '\n' ' '))"
	refused_exists "$what" $cfs/$short
	rmdir $cfs/$long || fail "$what: rmdir $long"
	mkdir $cfs/$short || fail "$what: mkdir $short once its disk is gone"
	rmdir $cfs/$short || fail "$what: rmdir $short"
	[ "$ko" = "$FACE_KO" ] || rmmod null_blk || fail "rmmod $what"
done
# Two long names cut to one: the second power on is refused with EEXIST
# and a line saying why (C null_blk's add_disk() would fail on the
# duplicate sysfs name).
mkdir $cfs/${long} $cfs/${short}xyz || fail "mkdir two long names"
echo 1 >$cfs/${long}/power || fail "power=1 on $long"
kmsg_mark
if echo 1 >$cfs/${short}xyz/power 2>/dev/null; then fail "power=1 on a second disk named $short"; fi
kmsg_since | grep -q "disk $short exists (-EEXIST)" || fail "no log line for the taken name"
expect_eq "$(cat $cfs/${short}xyz/power)" 0 "power of the refused second $short"
rmdir $cfs/${long} $cfs/${short}xyz || fail "rmdir the two long names"

# Face loaded: C null_blk is refused and the face stays as it was.
if insmod "$C_KO" 2>/tmp/face.err; then fail "C null_blk loaded beside the face"; fi
log "C null_blk refused: $(cat /tmp/face.err)"
grep -q 'File exists' /tmp/face.err || fail "C null_blk refused with another error"
[ -d $mod/host ] && fail "$mod/host appeared"
expect_eq "$(nullb_disks)" "nullb0 " "disks after C null_blk's refusal"
expect_eq "$(cat $cfs/features)" "$features" "$cfs/features after C null_blk's refusal"
rmmod null_blk || fail "rmmod the face"

# C null_blk loaded: the face is refused, null_blk stays as it was.
insmod "$C_KO" nr_devices=1 || fail "insmod C null_blk"
c_features=$(cat $cfs/features)
for p in $shared; do
	[ -e $mod/parameters/$p ] || fail "$p is not a C null_blk parameter"
done
kmsg_mark
if insmod "$FACE_KO" nr_devices=2 2>/tmp/face.err; then fail "the face loaded beside C null_blk"; fi
log "the face refused: $(cat /tmp/face.err)"
grep -q 'File exists' /tmp/face.err || fail "the face refused with another error"
kmsg_since | grep -q 'null_blk: .* device(s)' && fail "the face's init ran"
expect_eq "$(nullb_disks)" "nullb0 " "disks after the face's refusal"
expect_eq "$(cat $cfs/features)" "$c_features" "C null_blk's features after the face's refusal"
[ -e $mod/parameters/queue_mode ] || fail "C null_blk's parameters gone"
rmmod null_blk || fail "rmmod C null_blk"
[ ! -d $mod ] || fail "$mod left after rmmod"
rm -f /tmp/face.err

unload_rnull
log "face: names, configfs I/O and mutual refusal ok"
