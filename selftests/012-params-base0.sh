#!/bin/sh
# Module parameters read numbers as C's kstrtoint(s, 0), as null_blk's:
# "010" is octal 8, "0x10" is 16, "08" is invalid. The hostile-input tool
# gives every parameter the base-0 spellings of its range's ends and of
# a few numbers, each loading with the value kstrtoll reads (shown in
# /sys/module/rnull/parameters/) or refused with EINVAL and a log line;
# the devices are made from the values read so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"

hostile_params base0
[ "$h_params" -gt 0 ] || fail "no parameter tried"

load_rnull nr_devices=010 hw_queue_depth=0x20 host_queue_depth=0100
n=$(ls -d /sys/block/rnullb* | wc -l)
expect_eq "$n" 8 "devices of nr_devices=010"
expect_eq "$(dev_attr 0 hw_queue_depth)" 32 "hw_queue_depth=0x20"
expect_eq "$(cat /sys/module/rnull/host/depth)" 64 "host/depth of host_queue_depth=0100"
unload_rnull
hostile_verdict "base-0 spellings of $h_params parameters"
