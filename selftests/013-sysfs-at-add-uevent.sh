#!/bin/sh
# A disk's sysfs files exist when its "add" uevent goes out, so that udev
# rules can read them: rnull's files are an attribute group of the disk's
# device, created by device_add_disk before the event. (The hardware queue
# files, mq/<n>/time_slice_us, are on blk-mq's kobjects and come later.)
# uevent-probe busy-polls the uevent socket on another CPU and looks as soon
# as an event arrives. Files created after the event (the old code) are
# caught only if the probe looks before the driver creates them, a window
# of microseconds: the check is probabilistic against that bug, exact for
# the contract. Needs two CPUs and a kernel with CONFIG_NET (the debug flavour; `make
# test-debug`): without it there is no uevent socket, and no udev either.
. "$(dirname "$0")/lib.sh"
trap cleanup_rnull EXIT

probe=/usr/bin/uevent-probe
requires_file "$probe"
requires_cpus 2
grep -qi '^netlink' /proc/net/protocols 2>/dev/null ||
	skip "kernel without CONFIG_NET: no uevent socket to listen on"
n=8
ready=/tmp/uevent-probe.ready
rm -f "$ready"
"$probe" "$ready" rnullb "$n" 30 rnull/index rnull/completion_nsec rnull/tags_in_flight \
	>/tmp/uevent-probe.out 2>&1 &
pid=$!
i=0
while [ ! -e "$ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -e "$ready" ] || { cat /tmp/uevent-probe.out; fail "uevent-probe did not start"; }

load_rnull nr_devices="$n" host_queue_depth=64
wait "$pid" || { cat /tmp/uevent-probe.out; fail "uevent-probe saw fewer than $n disks"; }
cat /tmp/uevent-probe.out
ok=$(grep -c ' ok$' /tmp/uevent-probe.out)
[ "$ok" = "$n" ] || fail "only $ok of $n disks had their rnull/ files at the add uevent"
log "all $n disks had rnull/index, completion_nsec and tags_in_flight at their add uevent"
