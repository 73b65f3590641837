#!/bin/sh
# Reclaim is no I/O error: fio writes and verifies, buffered, more than its
# memory cgroup (v2) may hold, so that reclaim writes the page cache back
# under memory.max and the verify reads from the device what reclaim
# dropped; on a memory-backed device and on one with a write cache. No
# error, no mismatch; the limit must have been hit and the verify must
# have read from the device, or the scenario tested nothing. Needs
# CONFIG_MEMCG (skipped without). fail_page_alloc is 101's.
. "$(dirname "$0")/lib.sh"

grep -qw memory /proc/cgroups 2>/dev/null ||
	skip "no memory controller in /proc/cgroups: needs CONFIG_MEMCG (the debug kernel, make test-debug)"

root=/sys/fs/cgroup
cg=$root/rnull-104
# fio's own memory counts too: the limit leaves it room and is still far
# below what it writes.
limit=24M
size_mib=64
mounted=0
mkdir -p $root
if [ ! -e $root/cgroup.controllers ]; then
	mount -t cgroup2 none $root || skip "cannot mount cgroup2 on $root"
	mounted=1
fi
grep -qw memory $root/cgroup.controllers ||
	skip "cgroup2 has no memory controller (is it bound to a cgroup v1 hierarchy?)"
echo +memory >$root/cgroup.subtree_control || fail "cannot enable the memory controller in $root"
# Left by an earlier run in this boot, if any: empty once its fio ended.
rmdir $cg 2>/dev/null
mkdir $cg || fail "mkdir $cg failed"
echo $limit >$cg/memory.max || fail "memory.max=$limit refused"
leave() {
	cleanup_rnull
	rmdir $cg 2>/dev/null
	[ $mounted = 0 ] || umount $root
}
trap leave EXIT

# event NAME: a counter of the cgroup's memory.events.
event() { awk -v k="$1" '$1 == k { print $2 }' $cg/memory.events; }

# read_sectors: sectors rnullb0 has read (field 3 of its stat).
read_sectors() {
	read -r _ _ sectors _ </sys/block/rnullb0/stat
	echo "$sectors"
}

# verify WHAT PARAMS...: fio in the cgroup writes and verifies size_mib
# MiB of rnullb0 of a module loaded with PARAMS.
verify() {
	what=$1
	shift
	load_rnull "$@"
	max0=$(event max)
	oom0=$(event oom_kill)
	read0=$(read_sectors)
	# shellcheck disable=SC2016 # $$ is the shell that becomes fio
	out=$(sh -c 'echo $$ >'"$cg"'/cgroup.procs && exec fio --output-format=terse \
		--terse-version=3 --name=v --filename=/dev/rnullb0 --direct=0 --ioengine=psync \
		--rw=randwrite --bs=16k --size='"$size_mib"'m --verify=crc32c --do_verify=1 \
		--verify_fatal=1' 2>&1)
	rc=$?
	hits=$(($(event max) - max0))
	read_mib=$((($(read_sectors) - read0) / 2048))
	[ "$(event oom_kill)" = "$oom0" ] || fail "$what: fio was OOM-killed in memory.max=$limit: $out"
	[ $rc -eq 0 ] || fail "$what: fio failed in memory.max=$limit: $out"
	expect_eq "$(echo "$out" | grep '^3;' | terse_field 5)" 0 "$what: fio error status"
	[ $hits -gt 0 ] || fail "$what: memory.max was never hit: no reclaim, the scenario tested nothing"
	# What the cgroup could not keep cached came from the device.
	[ $read_mib -ge $((size_mib / 4)) ] ||
		fail "$what: the verify read $read_mib MiB from the device: reclaim dropped too little to test"
	log "$what: $size_mib MiB verified in memory.max=$limit, the limit hit $hits times, $read_mib MiB read back from the device"
	unload_rnull
}

verify memory-backed memory_backed=1 gb=1
verify cached memory_backed=1 gb=1 cache_size=4
