#!/bin/sh
# Many refused writes do not flood the kernel log: 50 invalid writes to
# each writable sysfs and configfs file of rnull's log at most the kernel's
# printk rate limit of lines naming the file (10 per 5 s), each write still
# refused with EINVAL.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"

load_rnull nr_devices=1 host_queue_depth=16
mkdir /sys/kernel/config/rnull/flood || fail "mkdir"
{
	sysfs_files
	configfs_files flood
} >/tmp/hostile.files
while read -r where path label; do
	hostile flood "$path" "$label" 50 x
	log "$where $label: $h_last"
	h_files=$((h_files + 1))
done </tmp/hostile.files
rmdir /sys/kernel/config/rnull/flood || fail "rmdir"
unload_rnull
hostile_verdict "floods of $h_files files"
