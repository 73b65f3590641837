#!/bin/sh
# Guest job: what BFQ does over time on the rotational model. Eight
# sequential readers (fio libaio iodepth 1, one per vCPU, each in its own
# 1 GiB region of rotational_model=1 gb=16) for BFQ_SECONDS virtual seconds
# at BFQ's defaults, each job's IOPS logged every second. The slice table's
# runs last 2-3 s; this shows whether BFQ's figure there is its steady state.
#
# Host: CPUS=8 RNULL_CLOCK=virtual scripts/qemu.sh --kdir "$(scripts/kernel.sh dir)" \
#   --name bfq-timeline --job scripts/bench/bfq-timeline.sh --env BFQ_SECONDS=15
# The per-second lines ("bfq-timeline: t=...") and the drive's counters are
# printed on the console.
M=/lib/modules/rnull
S=${BFQ_SECONDS:-15}
insmod $M/bfq.ko 2>/dev/null
insmod $M/rnull.ko rotational_model=1 gb=16 || exit 1
echo bfq >/sys/block/rnullb0/queue/scheduler || exit 1
for f in /sys/block/rnullb0/queue/iosched/*; do
	echo "bfq-timeline: iosched.$(basename "$f") $(cat "$f")"
done
cd /tmp || exit 1
fio --name=seq --filename=/dev/rnullb0 --direct=1 --rw=read --bs=4k --ioengine=libaio \
	--iodepth=1 --numjobs=8 --offset_increment=1g --size=1g --cpus_allowed=0-7 \
	--cpus_allowed_policy=split --time_based --runtime="$S" --write_iops_log=bfq \
	--log_avg_msec=1000 --output-format=json --output=/tmp/bfq.json >/dev/null 2>&1 ||
	echo "bfq-timeline: fio failed"
# bfq_iops.N.log: "msec, iops, dir, bs, offset" per second for job N.
for t in $(seq 1 "$S"); do
	line="t=${t}s"
	total=0
	for n in 1 2 3 4 5 6 7 8; do
		v=$(awk -F, -v t="$t" '$1 + 0 > (t - 1) * 1000 && $1 + 0 <= t * 1000 {print $2 + 0; exit}' \
			"bfq_iops.$n.log")
		line="$line ${v:-0}"
		total=$((total + ${v:-0}))
	done
	echo "bfq-timeline: $line total=$total"
done
sed 's/^/bfq-timeline: /' /sys/block/rnullb0/rnull/model_stats
rmmod rnull
