#!/bin/sh
# `make run`: load rnull and run one fio job on /dev/rnullb0.
set -e
insmod /lib/modules/rnull/rnull.ko irqmode=0 submit_queues="$(nproc)" ${RNULL_PARAMS:-}
echo "== fio: 4k random read, io_uring, iodepth 32, $(nproc) job(s), 10 s"
fio --name=rnull --filename=/dev/rnullb0 --direct=1 --rw=randread --bs=4k \
	--ioengine=io_uring --iodepth=32 --numjobs="$(nproc)" --group_reporting \
	--time_based --runtime="${RUNTIME:-10}" | grep -E 'IOPS=|lat \(|clat \(|^ +\|.*th=|error'
rmmod rnull
