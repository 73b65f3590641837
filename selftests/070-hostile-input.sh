#!/bin/sh
# Hostile input for every writable sysfs file of rnull's (the devices'
# rnull/ and mq/<n>/ files, /sys/module/rnull/host/), generated from its
# range (the module parameter's, from modinfo, or hostile.table's) by the
# hostile-input tool: range ends and one past them, overflow, C base-0
# spellings, whitespace and newlines, signs, garbage, embedded NULs and
# writes of a page and more. Each is accepted or refused as kstrtoll(s, 0)
# (or the list of names) and the range say; a refusal is EINVAL, changes
# nothing and logs at most one line naming the file and its range (the
# first refusal exactly one); user nobody cannot write.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"

requires_cpus 2
load_rnull nr_devices=2 submit_queues=2 host_queue_depth=16
sysfs_files >/tmp/hostile.files
for where in disk hctx host; do
	grep -q "^$where " /tmp/hostile.files || fail "no writable $where file found"
done
hostile_files </tmp/hostile.files
unload_rnull
hostile_verdict "$h_files sysfs files"
