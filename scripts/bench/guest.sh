#!/bin/sh
# `make bench`, guest side: run the scenarios, alternating the drivers'
# order every round so machine noise hits all of them alike, then send the
# fio JSON results to the host over the console (tar | gzip | base64).
#
# Environment (from the host): SCENARIOS, ROUNDS, RUNTIME, POLICIES_SUBS.
M=/lib/modules/rnull
J=/bench/jobs
R=/tmp/results
CPUS=$(nproc)
LASTCPU=$((CPUS - 1))
ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-5}
SCENARIOS=${SCENARIOS:-peak qd_sweep shared_tags memory starvation hotpath fairness block035 policies policy_switch slices slice_clock slice_single slice_cost first_write qd_ladder bind_tags}
export LASTCPU RUNTIME
mkdir -p $R

unload_all() {
	for m in rnull null_blk rnull_mod; do rmmod "$m" 2>/dev/null; done
	true
}

# load DRIVER PARAMS...: load one driver, set DEV to its first disk.
load() {
	drv=$1
	shift
	unload_all
	case "$drv" in
	rnull) insmod $M/rnull.ko "$@" && DEV=/dev/rnullb0 ;;
	null_blk) insmod $M/null_blk.ko queue_mode=2 "$@" && DEV=/dev/nullb0 ;;
	rnull_mod) insmod $M/rnull_mod.ko && DEV=/dev/rnullb0 ;;
	esac || { echo "bench: cannot load $drv $*"; return 1; }
	for s in /sys/block/*/queue/scheduler; do echo none >"$s" 2>/dev/null; done
	export DEV
}

# rotate N WORDS...: the words rotated left by N (alternating order).
rotate() {
	n=$1
	shift
	i=0
	while [ $i -lt $((n % $#)) ]; do
		first=$1
		shift
		set -- "$@" "$first"
		i=$((i + 1))
	done
	echo "$@"
}

iops_of() { sed -n 's/.*"iops" : \([0-9.]*\).*/\1/p' "$1" | awk '{s+=$1} END {printf "%.0f", s}'; }

# run SCENARIO VARIANT DRIVER ROUND FIO-ARGS...: one fio run, its JSON
# result in $R/SCENARIO/VARIANT/DRIVER/rROUND.json.
run() {
	run_out=$R/$1/$2/$3/r$4
	run_what="[$1] $2 $3 round $4/$ROUNDS"
	mkdir -p "$R/$1/$2/$3"
	shift 4
	fio --output-format=json --output="$run_out.json" "$@" >/dev/null 2>"$run_out.err" ||
		echo "bench: fio failed: $run_what: $(head -c 300 "$run_out.err")"
	echo "bench: $run_what: $(iops_of "$run_out.json") IOPS"
}

# alternate ROUNDS FN VARIANT...: FN ROUND VARIANT for every round and
# variant, the variants' order rotated every round so that machine noise
# hits all of them alike.
alternate() {
	a_rounds=$1 a_fn=$2
	shift 2
	for a_r in $(seq 1 "$a_rounds"); do
		for a_v in $(rotate "$a_r" "$@"); do
			"$a_fn" "$a_r" "$a_v"
		done
	done
}

# Sweeps use half the rounds (rounded up) to keep the suite in minutes.
HALF=$(((ROUNDS + 1) / 2))

# common_params DRIVER: parameters shared by rnull and null_blk runs.
common_params() { [ "$1" = rnull_mod ] || echo "irqmode=0 submit_queues=$CPUS"; }

# 4k random reads through io_uring: peak_read SCENARIO VARIANT DRIVER ROUND QD BATCH JOBS GTOD_REDUCE
peak_read() {
	QD=$5 BATCH=$6 JOBS=$7 GTOD_REDUCE=$8 run "$1" "$2" "$3" "$4" $J/randread.fio
}

# The peak matrix: every row against C null_blk configured the same way
# (one hardware queue per vCPU, depth 256, numjobs = vCPUs, 4k random
# io_uring with gtod_reduce), and against rnull_mod where it can be (its 6.12
# version has one queue of depth 256 and completes in queue_rq: irqmode 0,
# one vCPU). Rows only rnull has (host budget, time slices) name the row
# they are compared with in a `ref` file.
PEAK_BASE="submit_queues=$CPUS hw_queue_depth=256"
# The shape of the 6.12 rnull_mod (which takes no parameters).
PEAK_MOD="submit_queues=1 hw_queue_depth=256 gb=8 bs=4096"

# peak_row ROW REF DRIVERS PARAMS: describes one row of the matrix.
peak_row() {
	mkdir -p "$R/peak/$1"
	[ "$2" = - ] || echo "$2" >"$R/peak/$1/ref"
	for d in $3; do
		case "$d" in
		rnull_mod) echo "rnull_mod: (none: one queue of depth 256, completes in queue_rq)" ;;
		*) echo "$d: $4" ;;
		esac >>"$R/peak/$1/params"
	done
}

# peak_load DRIVER PARAMS...: rnull_mod takes no parameters.
peak_load() {
	if [ "$1" = rnull_mod ]; then load rnull_mod; else load "$@"; fi
}

# Several vCPUs take turns on one host thread: a second of warm-up keeps
# the jobs' staggered start out of the figures, and twice the run time
# gives each vCPU's job as many virtual seconds of its own as one vCPU's.
# (On the QEMU of scripts/qemu-build.sh the turns repeat exactly from
# boot to boot; see qemu.sh.)
PEAK_RAMP=0 PEAK_RUNTIME=$RUNTIME
[ "$CPUS" -gt 1 ] && PEAK_RAMP=1 PEAK_RUNTIME=$((RUNTIME * 2))

# peak_qd ROUND ROW DRIVER RW SIZE: the qd1 and qd32 rows of one loaded driver.
peak_qd() {
	for qd in 1 32; do
		RUNTIME=$PEAK_RUNTIME RAMP=$PEAK_RAMP RW=$4 SIZE=$5 QD=$qd JOBS=$CPUS \
			run peak "$2-qd$qd" "$3" "$1" $J/peak.fio
	done
}

# peak_config ROUND CONFIG: one configuration, every driver it has, the
# drivers' order rotated by round.
peak_config() {
	case "$2" in
	irq0 | irq1 | irq2)
		# Not `m`: unload_all's loop variable (shell variables are global).
		pk_irq=${2#irq}
		for d in $(rotate "$1" rnull null_blk); do
			load "$d" irqmode="$pk_irq" $PEAK_BASE || continue
			peak_qd "$1" "$2" "$d" randread 100%
		done
		;;
	mod)
		# rnull_mod's fixed shape: 8 GiB of 4 KiB blocks, one queue.
		for d in $(rotate "$1" rnull null_blk rnull_mod); do
			peak_load "$d" irqmode=0 $PEAK_MOD || continue
			peak_qd "$1" "$2" "$d" randread 100%
		done
		;;
	mem)
		for d in $(rotate "$1" rnull null_blk); do
			load "$d" irqmode=0 memory_backed=1 gb=1 $PEAK_BASE || continue
			# Written first, so that reads find pages.
			dd if=/dev/zero of="$DEV" bs=1M count=256 oflag=direct 2>/dev/null
			peak_qd "$1" mem-write "$d" randwrite 256m
			peak_qd "$1" mem-read "$d" randread 256m
		done
		;;
	host-*)
		load rnull irqmode=0 $PEAK_BASE host_queue_depth=1024 tag_policy="${2#host-}" || return
		peak_qd "$1" "$2" rnull randread 100%
		;;
	ts250)
		load rnull irqmode=0 $PEAK_BASE time_slice_us=250 || return
		peak_qd "$1" "$2" rnull randread 100%
		;;
	esac
}

peak() {
	for qd in 1 32; do
		for i in 0 1 2; do
			peak_row "irq$i-qd$qd" - "rnull null_blk" "irqmode=$i $PEAK_BASE"
		done
		[ "$CPUS" = 1 ] && peak_row "mod-qd$qd" - "rnull null_blk rnull_mod" "irqmode=0 $PEAK_MOD"
		for rw in write read; do
			peak_row "mem-$rw-qd$qd" - "rnull null_blk" "irqmode=0 memory_backed=1 gb=1 $PEAK_BASE"
		done
		for p in fair borrow lend none; do
			peak_row "host-$p-qd$qd" "irq0-qd$qd" rnull \
				"irqmode=0 $PEAK_BASE host_queue_depth=1024 tag_policy=$p"
		done
		peak_row "ts250-qd$qd" "irq0-qd$qd" rnull "irqmode=0 $PEAK_BASE time_slice_us=250"
	done
	configs="irq0 irq1 irq2 mem host-fair host-borrow host-lend host-none ts250"
	[ "$CPUS" = 1 ] && configs="$configs mod"
	# A subset (PEAK_CONFIGS="irq0 host-fair ..."), e.g. to re-measure a change.
	configs=${PEAK_CONFIGS:-$configs}
	alternate "$ROUNDS" peak_config $configs
}

qd_sweep_round() {
	load "$2" $(common_params "$2") || return
	for qd in 1 2 4 8 16 32 64; do
		b=1
		[ $qd -ge 8 ] && b=$((qd / 4))
		peak_read qd_sweep qd$qd "$2" "$1" $qd $b 1 0
	done
}
qd_sweep() { alternate "$HALF" qd_sweep_round rnull null_blk rnull_mod; }

shared_tags_round() {
	for mode in per-device shared; do
		st=0
		[ $mode = shared ] && st=1
		load "$2" irqmode=0 submit_queues=$CPUS nr_devices=4 shared_tags=$st hw_queue_depth=64 || continue
		p=rnullb
		[ "$2" = null_blk ] && p=nullb
		devs=""
		for i in 0 1 2 3; do
			devs="$devs --name=d$i --filename=/dev/$p$i"
		done
		# $devs unquoted: one word per option.
		run shared_tags $mode "$2" "$1" --direct=1 --rw=randread --bs=4k --ioengine=io_uring \
			--thread --iodepth=32 --time_based --runtime=$RUNTIME --group_reporting $devs
	done
}
shared_tags() { alternate "$ROUNDS" shared_tags_round rnull null_blk; }

memory_round() {
	load "$2" irqmode=0 submit_queues=$CPUS memory_backed=1 gb=1 || return
	# Fill first so that reads hit written pages.
	dd if=/dev/zero of=$DEV bs=1M count=256 oflag=direct 2>/dev/null
	RW=randwrite QD=16 JOBS=$CPUS run memory write "$2" "$1" $J/memory.fio
	RW=randread QD=16 JOBS=$CPUS run memory read "$2" "$1" $J/memory.fio
}
memory() { alternate "$ROUNDS" memory_round rnull null_blk; }

starvation_round() {
	for d in 16 64 256 1024; do
		load "$2" irqmode=0 submit_queues=1 hw_queue_depth=$d || continue
		# More jobs x iodepth than tags: 4 jobs per CPU at depth 64.
		peak_read starvation depth$d "$2" "$1" 64 1 $((CPUS * 4)) 1
	done
}
starvation() { alternate "$HALF" starvation_round rnull null_blk; }

hotpath_round() {
	hq=1024 pol=$2
	[ "$2" = tags-off ] && hq=0 && pol=fair
	load rnull irqmode=0 submit_queues=$CPUS nr_devices=2 host_queue_depth=$hq tag_policy=$pol || return
	run hotpath "$2" rnull "$1" --direct=1 --rw=randread --bs=4k --ioengine=io_uring --thread \
		--gtod_reduce=1 --iodepth=32 --time_based --runtime=$RUNTIME --group_reporting \
		--numjobs=$CPUS --name=a --filename=/dev/rnullb0 --name=b --filename=/dev/rnullb1
}
hotpath() { alternate "$ROUNDS" hotpath_round tags-off fair borrow; }

# Kuai: host depth 32, timer completions, A busy, B ~10 IOPS. The issue's
# 1 ms needs 32k timer completions a second, more than a TCG guest can do,
# so the default is 10 ms: the same tag arithmetic at a tenth of the rate.
FAIR_NS=${FAIR_COMPLETION_NS:-10000000}
# B's rate keeps the scenario's duty cycle: 10 I/Os a second at 1 ms.
B_IOPS=$((10000000 / FAIR_NS))
[ "$B_IOPS" -ge 1 ] || B_IOPS=1
export B_IOPS
# blk-mq retires an idle queue only from its timeout work, seconds after its
# last request; a light disk stays "active" between its rare I/Os. Model
# that, or B would drop out of the fair share between requests.
IDLE_MS=${FAIR_IDLE_MS:-5000}
fairness_round() {
	load rnull nr_devices=2 host_queue_depth=32 tag_policy="$2" irqmode=2 \
		completion_nsec=$FAIR_NS submit_queues=1 || return
	echo "$IDLE_MS" >/sys/module/rnull/host/idle_ms
	RUNTIME=$((RUNTIME * 2)) run fairness "$2" rnull "$1" $J/fairness.fio
}
fairness() { alternate "$HALF" fairness_round fair borrow none lend; }

# block/035: fast (1 ms) and slow (100 ms) devices share the budget.
block035_round() {
	load rnull nr_devices=2 host_queue_depth=64 tag_policy="$2" irqmode=2 \
		completion_nsec=1000000 submit_queues=1 hw_queue_depth=64 || return
	echo 100000000 >/sys/block/rnullb1/rnull/completion_nsec
	RUNTIME=$((RUNTIME * 2)) run block035 "$2" rnull "$1" $J/block035.fio
}
block035() { alternate "$HALF" block035_round fair borrow none lend; }

# Per-device IOPS over time while the policy changes every few seconds.
policy_switch() {
	out=$R/policy_switch/timeline/rnull
	mkdir -p $out
	load rnull nr_devices=2 host_queue_depth=32 tag_policy=fair irqmode=2 \
		completion_nsec=$FAIR_NS submit_queues=1 || return
	echo "$IDLE_MS" >/sys/module/rnull/host/idle_ms
	step=$((RUNTIME > 3 ? RUNTIME : 3))
	cd $out || return
	reads0=$(cut -c1-16 /sys/block/rnullb0/stat)
	RUNTIME=$((step * 4)) fio --output-format=json --output=$out/r1.json --write_iops_log=iops \
		--log_avg_msec=250 $J/fairness.fio >/dev/null 2>$out/r1.err &
	pid=$!
	# fio's log clock starts with its I/O, not with the command: take the
	# time of its first read as zero, so the switch marks line up.
	while [ "$(cut -c1-16 /sys/block/rnullb0/stat)" = "$reads0" ]; do sleep 0.05; done
	start=$(cut -d' ' -f1 /proc/uptime)
	: >switches.txt
	for p in fair borrow none borrow; do
		now=$(cut -d' ' -f1 /proc/uptime)
		echo $p >/sys/module/rnull/host/policy
		echo "$(echo "$now $start" | awk '{printf "%d", ($1 - $2) * 1000}') $p" >>switches.txt
		sleep $step
	done
	wait $pid
	# fio names logs iops_iops.N.log in job order: 1 = A, 2 = B.
	[ -f iops_iops.1.log ] && mv iops_iops.1.log A_iops.1.log
	[ -f iops_iops.2.log ] && mv iops_iops.2.log B_iops.2.log
	cd / || return
	echo "bench: [policy_switch] timeline recorded ($(wc -l <$out/switches.txt) switches)"
}

# Tag fairness on the maintainers' scenarios (issue #14), under every policy
# the driver offers: the list comes from host/policy, so a policy added to
# the driver is benchmarked without editing this file. One module load per
# run. Beside each run's rROUND.json, rROUND.handoffs holds the change of
# host/slow_handoffs while fio's I/O runs and rROUND.handoffs_run over the
# whole run (see pol_run): refused queues that waited 1 ms or more after a
# tag they could use was freed (the restart protocol should keep it at 0),
# and the variant's `params` file says what was loaded.
# Variants are SUB-POLICY; the report builds one table from them.
H=/sys/module/rnull/host

# host_policies: the names host/policy lists (the active one is bracketed).
host_policies() {
	load rnull host_queue_depth=1 >/dev/null || return
	tr -d '[]' <$H/policy
	unload_all
}

# pol_note SUB POLICY TEXT: the variant's `params` file (module parameters
# and sysfs settings of its runs).
pol_note() {
	mkdir -p "$R/policies/$1-$2"
	echo "rnull: $3" >"$R/policies/$1-$2/params"
}

# pol_run SUB POLICY ROUND FIO-ARGS...: one fio run of the loaded rnull as
# variant SUB-POLICY, with its slow hand-offs beside the JSON: rROUND.handoffs
# counts them while fio's I/O runs, from POL_EDGE seconds after its first tag
# to POL_EDGE before its end (RUNTIME after the first tag), rROUND.handoffs_run
# over the whole run. At the edges fio's jobs start and stop (forks,
# page faults, exits) on the same two vCPUs: the kblockd work that re-runs a
# woken queue waits for a CPU like any other, 1 to 7 ms (see the README,
# "Tag policies on the maintainers' scenarios"). Nothing is forked inside the
# counted span: both sleeps start before it, the counts are read with the
# shell's own `read`.
POL_EDGE=${POL_EDGE:-0.1}
# pol_read FILE: sets pol_v to FILE's value, read with the shell's `read`
# (no fork) until two reads agree: `read` takes a byte at a time, each a
# new rendering of the file, and a count that changes meanwhile could tear
# ("9" then "10" read as "90").
pol_read() {
	read -r pol_v <"$1"
	while read -r pol_again <"$1" && [ "$pol_again" != "$pol_v" ]; do
		pol_v=$pol_again
	done
}
pol_run() {
	pr_var=$1-$2 pr_round=$3
	shift 3
	pol_read "$H/slow_handoffs"
	pr_h0=$pol_v
	run policies "$pr_var" rnull "$pr_round" "$@" &
	pr_pid=$!
	# The first tag is fio's: the load's own I/O (the partition scan) is
	# over when `load` returns.
	while pol_read "$H/in_use" && [ "$pol_v" = 0 ]; do
		kill -0 "$pr_pid" 2>/dev/null || break
		sleep 0.01
	done
	pr_span=$(echo "$RUNTIME $POL_EDGE" | awk '{printf "%.3f", $1 - $2}')
	sleep "$POL_EDGE" &
	pr_from=$!
	sleep "$pr_span" &
	pr_to=$!
	wait "$pr_from"
	pol_read "$H/slow_handoffs"
	pr_h1=$pol_v
	wait "$pr_to"
	pol_read "$H/slow_handoffs"
	pr_h2=$pol_v
	wait "$pr_pid"
	pol_read "$H/slow_handoffs"
	pr_h3=$pol_v
	pr_n=$((pr_h2 - pr_h1)) pr_all=$((pr_h3 - pr_h0))
	echo "$pr_n" >"$R/policies/$pr_var/rnull/r$pr_round.handoffs"
	echo "$pr_all" >"$R/policies/$pr_var/rnull/r$pr_round.handoffs_run"
	[ "$pr_all" = 0 ] ||
		echo "bench: [policies] $pr_var round $pr_round: $pr_n slow hand-offs while I/O runs, $pr_all in the whole run"
}

# Yu Kuai's case: host depth 32, 1 ms timer completions, A busy (iodepth
# 32), B about 10 I/Os a second (iodepth 1). Virtual time needs no slowed
# clock (the `fairness` scenario's 10 ms): the guest keeps up with 32k
# timer completions a second when its time is counted in instructions. B
# stays active between its I/Os (idle_ms 5000: blk-mq retires an idle queue
# only from its timeout work, seconds after the last request). Twice the
# run time: B does only ten I/Os a second.
pol_kuai() {
	pp="nr_devices=2 host_queue_depth=32 tag_policy=$2 irqmode=2 completion_nsec=1000000 submit_queues=1"
	load rnull $pp || return
	echo 5000 >$H/idle_ms
	pol_note kuai "$2" "$pp; host/idle_ms=5000"
	B_IOPS=10 RUNTIME=$((RUNTIME * 2)) pol_run kuai "$2" "$1" $J/fairness.fio
}

# Keith Busch's NVMe case: two namespaces on one queue of 63 tags. The
# heavy device writes 128 KiB at iodepth 256 behind a 1750 MiB/s link
# (rnull/mbps; Busch's 14.0k IOPS) and completes when its bytes have
# crossed it, so its requests hold their tags while they queue behind
# bandwidth (63 on the link: 4.5 ms each). The light device reads 512
# bytes at iodepth 1 and completes after a fixed 350 us (about 2.7k IOPS
# alone, Busch's 2,726). Each light request needs a tag exactly when the
# heavy device may hold all of them, and the heavy device's tags come back
# only one every 71 us: that is the starvation the policies differ on (with
# 1 ms fixed completions and no bandwidth limit, the tags come back so fast
# that even `none` costs the light job only 7-11%, issue #14). Each job is
# pinned to its own vCPU, so the light job's turnaround does not depend on
# the heavy one's CPU time. blk-mq's own depth (hw_queue_depth 256) is not
# what binds: the heavy job's 256 requests all reach the driver, and the
# 63-tag budget refuses the rest, as the shared NVMe queue does.
BUSCH_MBPS=1750
BUSCH_LIGHT_NS=350000
busch_load() {
	pp="nr_devices=2 host_queue_depth=63 tag_policy=$1 irqmode=2 completion_nsec=$BUSCH_LIGHT_NS submit_queues=1 hw_queue_depth=256"
	load rnull $pp || return
	echo 0 >/sys/block/rnullb0/rnull/completion_nsec
	echo "$BUSCH_MBPS" >/sys/block/rnullb0/rnull/mbps
	BUSCH_PARAMS="$pp; rnullb0: rnull/mbps=$BUSCH_MBPS rnull/completion_nsec=0"
}
pol_busch() {
	busch_load "$2" || return
	pol_note busch "$2" "$BUSCH_PARAMS"
	pol_run busch "$2" "$1" $J/policies-busch.fio
}

# Jens Axboe's first question: the QD1 job alone. The light job of
# Busch's case with the heavy device loaded but idle: its solo baseline.
pol_qd1_alone() {
	busch_load "$2" || return
	pol_note qd1_alone "$2" "$BUSCH_PARAMS; fio --section=light (no heavy job)"
	pol_run qd1_alone "$2" "$1" --section=light $J/policies-busch.fio
}

# Axboe's second: iodepth 32 against iodepth 32 on two devices sharing a
# 32-tag budget and a 1000 MiB/s host link (host_mbps): 128 KiB reads that
# complete when their bytes have crossed the link, so each device's
# bandwidth is its share of the requests on the link, i.e. of the tags.
pol_qd32_split() {
	pp="nr_devices=2 host_queue_depth=32 host_mbps=1000 tag_policy=$2 irqmode=2 completion_nsec=0 submit_queues=1"
	load rnull $pp || return
	pol_note qd32_split "$2" "$pp"
	pol_run qd32_split "$2" "$1" $J/policies-split.fio
}

# blktests block/035: fast (1 ms) and slow (100 ms) devices, iodepth 64
# each, a 64-tag budget; twice the run time for the slow one's sake.
pol_block035() {
	pp="nr_devices=2 host_queue_depth=64 tag_policy=$2 irqmode=2 completion_nsec=1000000 submit_queues=1 hw_queue_depth=64"
	load rnull $pp || return
	echo 100000000 >/sys/block/rnullb1/rnull/completion_nsec
	pol_note block035 "$2" "$pp; rnullb1: rnull/completion_nsec=100000000"
	RUNTIME=$((RUNTIME * 2)) pol_run block035 "$2" "$1" $J/block035.fio
}

# Three devices completing in 100 us, 1 ms and 10 ms, iodepth 12 each, on
# one 12-tag budget: how each policy shares it among different latencies.
# 12 tags are blk-mq's minimum fair share (4) for each of three: 40k, 4k
# and 400 IOPS under `fair`. A larger budget makes the 100 us device's
# share more than the guest's CPU can complete (with 32 tags it did 66-80k
# of the 110k its 11 tags allow), and the figures then measure CPU time.
pol_latencies() {
	pp="nr_devices=3 host_queue_depth=12 tag_policy=$2 irqmode=2 completion_nsec=100000 submit_queues=1"
	load rnull $pp || return
	echo 1000000 >/sys/block/rnullb1/rnull/completion_nsec
	echo 10000000 >/sys/block/rnullb2/rnull/completion_nsec
	pol_note latencies "$2" "$pp; rnullb1, rnullb2: rnull/completion_nsec=1000000, 10000000"
	pol_run latencies "$2" "$1" $J/policies-latencies.fio
}

# POLICIES_SUBS selects sub-scenarios (default: all). Each pol_SUB loads
# rnull with $pp, the module parameters, unquoted: one word per parameter.
POLICIES_SUBS=${POLICIES_SUBS:-kuai busch qd1_alone qd32_split block035 latencies}
policies_round() {
	for sub in $POLICIES_SUBS; do
		"pol_$sub" "$1" "$2"
	done
}
policies() {
	pols=$(host_policies)
	[ -n "$pols" ] || { echo "bench: [policies] cannot read host/policy"; return; }
	echo "bench: [policies] policies: $pols"
	# $pols unquoted: one word per policy.
	alternate "$ROUNDS" policies_round $pols
}

# The rotational model for the slice scenarios: rtags' disk model with its
# defaults (a 7200 rpm SATA disk of 2009-2010, calibrated on Herrmann's
# figures) on the issue's 16 GiB device. The guest runs on virtual time,
# where a fio job comes back in tens of microseconds as on bare metal: no
# time scaling.
model() { echo "rotational_model=1 gb=16"; }
# Seconds of warm-up left out of the figures: the drive's cache starts
# empty (slices.fio, slice_mix.fio).
SLICE_RAMP=${SLICE_RAMP:-1}
export SLICE_RAMP

# The block layer's schedulers beside the slices, each on the same model
# with time_slice_us=0: mq-deadline, kyber, and bfq with its defaults,
# without idling (slice_idle=0) and without its low-latency heuristics
# (low_latency=0, what it needs on this workload: see the README).
SLICE_SCHEDS=${SLICE_SCHEDS-mq-deadline kyber bfq bfq-idle0 bfq-lowlat0}

# slice_sched LABEL: selects LABEL's scheduler on rnullb0 and sets its
# tunables.
slice_sched() {
	q=/sys/block/rnullb0/queue
	case "$1" in
	bfq*) echo bfq >$q/scheduler ;;
	*) echo "$1" >$q/scheduler ;;
	esac || return
	case "$1" in
	bfq-idle0) echo 0 >$q/iosched/slice_idle ;;
	bfq-lowlat0) echo 0 >$q/iosched/low_latency ;;
	esac
}

# slice_run SCENARIO VARIANT SETTING ROUND FIO-ARGS...: one run on a freshly
# loaded model (an empty cache, zeroed counters) at SETTING (ts<us>: rnull's
# slices, no scheduler; else a scheduler label), its result under driver
# rnull or the label, and the drive's counters and the scheduler's tunables
# beside the fio JSON (`rN.stats`).
slice_run() {
	sr_scen=$1 sr_var=$2 sr_set=$3 sr_round=$4
	shift 4
	case "$sr_set" in
	ts*)
		load rnull $(model) time_slice_us="${sr_set#ts}" || return
		sr_drv=rnull
		;;
	*)
		load rnull $(model) || return
		slice_sched "$sr_set" || return
		sr_drv=$sr_set
		;;
	esac
	# The drive's own rate over a window inside fio's: fio's figure is each
	# job's I/O over its own window, which starts when that job's ramp ends,
	# and with slices or BFQ budgets of tens of ms the jobs' windows catch
	# different shares of their turns (4 jobs at 100 ms slices: 1.3x one
	# job). The window starts 0.1 s after fio's warm-up, ends 0.1 s before
	# fio does, and covers every job's turns alike.
	run "$sr_scen" "$sr_var" "$sr_drv" "$sr_round" "$@" &
	sr_pid=$!
	usleep $((SLICE_RAMP * 1000000 + 100000))
	sr_w0=$(sed 's/^/w0./' /sys/block/rnullb0/rnull/model_stats)
	usleep $((RUNTIME * 1000000 - 200000))
	sr_w1=$(sed 's/^/w1./' /sys/block/rnullb0/rnull/model_stats)
	wait $sr_pid
	{
		echo "$sr_w0"
		echo "$sr_w1"
		cat /sys/block/rnullb0/rnull/model_stats
		echo "scheduler $(cat /sys/block/rnullb0/queue/scheduler)"
		for f in /sys/block/rnullb0/queue/iosched/*; do
			[ -f "$f" ] && echo "iosched.$(basename "$f") $(cat "$f")"
		done
	} >"$R/$sr_scen/$sr_var/$sr_drv/r$sr_round.stats"
}

# Herrmann's table on the rotational model: fio rw=read, write, randread,
# numjobs 1, 2, 4 ... up to the vCPUs (each job pinned, in its own 1 GiB
# region), at SETTING (ts<us> or a scheduler), and the mix: one random
# reader among seven sequential readers (needs 8 vCPUs). Sequential writes
# and random reads do a few hundred IOPS: they run twice as long (virtual
# time costs what the guest executes, so slow runs are cheap).
slices_round() {
	case "$2" in
	ts*) ts=${2#ts} ;;
	*) ts=0 ;;
	esac
	for rw in ${SLICE_WORKLOADS:-read write randread}; do
		wl=seq$rw rt=$RUNTIME
		[ "$rw" = randread ] && wl=randread
		# Sequential writes and random reads do ~130 IOPS: 2 s hold a few
		# hundred requests, and a count of a few hundred varies by 5% from
		# run to run. Ten times the run time holds thousands; on virtual
		# time an idle guest costs nothing, so it is cheap.
		[ "$rw" = read ] || rt=$((RUNTIME * 10))
		j=1
		while [ $j -le "$CPUS" ]; do
			RW=$rw JOBS=$j RUNTIME=$rt slice_run slices "$wl-ts$ts-j$j" "$2" "$1" $J/slices.fio
			j=$((j * 2))
		done
	done
	# The mix's random reader does tens of IOPS: its p99 needs the time.
	[ "$CPUS" -ge 8 ] && RUNTIME=$((RUNTIME * 3)) slice_run slice_mix "mix-ts$ts" "$2" "$1" \
		$J/slice_mix.fio
}
slices() {
	# Built as modules in the guest kernel (kyber is built in); a second
	# insmod of a loaded one fails harmlessly.
	for m in mq-deadline bfq; do insmod "$M/$m.ko" 2>/dev/null || true; done
	settings=""
	for ts in ${SLICES_US:-0 50 250 500 1000 5000 20000}; do settings="$settings ts$ts"; done
	alternate "$HALF" slices_round $settings $SLICE_SCHEDS
}

# When the slice clock starts: at selection (Herrmann) or at the first
# completion (CFQ); one and all-vCPU sequential readers at 250 us, against
# no slice.
slice_clock_round() {
	clock=completion ts=250
	[ "$2" = ts0 ] && ts=0
	[ "$2" = selection ] && clock=selection
	load rnull $(model) time_slice_us=$ts time_slice_start=$clock || return
	for j in 1 "$CPUS"; do
		RW=read JOBS=$j run slice_clock "$2-j$j" rnull "$1" $J/slices.fio
	done
}
slice_clock() { alternate "$HALF" slice_clock_round ts0 selection completion; }

# One sequential stream, nothing to switch to: what a slice costs it.
# More rounds than the table, alternating the slices within each round.
slice_single_round() {
	load rnull $(model) time_slice_us="$2" || return
	for rw in read write; do
		RW=$rw JOBS=1 run slice_single "seq$rw-ts$2" rnull "$1" $J/slices.fio
	done
}
slice_single() { alternate "$ROUNDS" slice_single_round 0 250 1000 20000; }

# Peak IOPS with the model off: the slice machinery built in, slices 0 and
# 250 us, against C null_blk in the same rounds.
slice_cost_round() {
	case "$2" in
	ts0) load rnull $(common_params rnull) ;;
	ts250) load rnull $(common_params rnull) time_slice_us=250 ;;
	null_blk) load null_blk $(common_params null_blk) ;;
	esac || return
	drv=rnull
	[ "$2" = null_blk ] && drv=null_blk
	for qd in 1 32; do
		peak_read slice_cost "qd$qd-$2" $drv "$1" $qd 1 "$CPUS" 1
	done
}
slice_cost() { alternate "$ROUNDS" slice_cost_round ts0 ts250 null_blk; }

# First writes: a fresh memory-backed device per run (loaded anew), 4k
# random writes that each land on a page never written (first_write.fio:
# fio's random map over a region per job, IOSIZE of it written), so every
# write allocates its page. 256 MiB in all: the guest has 1 GiB.
FW_PARAMS="irqmode=0 memory_backed=1 gb=4 $PEAK_BASE"
first_write_round() {
	for qd in 1 32; do
		load "$2" $FW_PARAMS || return
		SIZE=$((4096 / CPUS))m IOSIZE=$((256 / CPUS))m QD=$qd JOBS=$CPUS \
			run first_write "qd$qd" "$2" "$1" $J/first_write.fio
	done
}
first_write() {
	for qd in 1 32; do
		mkdir -p "$R/first_write/qd$qd"
		for d in rnull null_blk; do echo "$d: $FW_PARAMS"; done >"$R/first_write/qd$qd/params"
	done
	alternate "$ROUNDS" first_write_round rnull null_blk
}

# The polled QD ladder (io_uring IOPOLL on the poll queue) and the same
# ladder interrupt-driven (4 us timer completions), 512-byte random reads,
# batch qd/4 from qd 8 (the io_uring seed's table); one job per vCPU.
LADDER_PARAMS="irqmode=2 completion_nsec=4000 poll_queues=1 $PEAK_BASE"
# Subsets (LADDER_MODES="poll", LADDER_QDS="1 8 64"), e.g. to re-measure a change.
LADDER_MODES=${LADDER_MODES:-poll irq}
LADDER_QDS=${LADDER_QDS:-1 2 4 8 16 32 64}
qd_ladder_round() {
	load "$2" $LADDER_PARAMS || return
	for mode in $LADDER_MODES; do
		hipri=0
		[ $mode = poll ] && hipri=1
		for qd in $LADDER_QDS; do
			b=1
			[ $qd -ge 8 ] && b=$((qd / 4))
			RUNTIME=$PEAK_RUNTIME RAMP=$PEAK_RAMP HIPRI=$hipri QD=$qd BATCH=$b JOBS=$CPUS \
				run qd_ladder "$mode-qd$qd" "$2" "$1" $J/qd_ladder.fio
		done
	done
}
qd_ladder() {
	for mode in $LADDER_MODES; do
		for qd in $LADDER_QDS; do
			mkdir -p "$R/qd_ladder/$mode-qd$qd"
			for d in rnull null_blk; do echo "$d: $LADDER_PARAMS"; done \
				>"$R/qd_ladder/$mode-qd$qd/params"
		done
	done
	alternate "$HALF" qd_ladder_round rnull null_blk
}

# Shared tags that bind: 4 devices on one hardware queue each, a job per
# device and vCPU at iodepth 32 (demand 128 per device), 32 tags for all of
# them: blk-mq's shared tag set (`shared`, both drivers), rnull's host
# budget under each policy host/policy lists (`host-<policy>`), and a tag
# set per device of the same depth (`per-device`, both drivers), where only
# each device's own 32 tags bind. One fio job name per device (d0..d3), so
# the report has each device's share.
BIND_BASE="irqmode=0 submit_queues=1 nr_devices=4 hw_queue_depth=32"
bind_params() {
	case "$1" in
	per-device) echo "$BIND_BASE" ;;
	shared) echo "$BIND_BASE shared_tags=1" ;;
	host-*) echo "$BIND_BASE host_queue_depth=32 tag_policy=${1#host-}" ;;
	esac
}
bind_tags_round() {
	case "$2" in
	host-*) drivers=rnull ;;
	*) drivers=$(rotate "$1" rnull null_blk) ;;
	esac
	for d in $drivers; do
		load "$d" $(bind_params "$2") || continue
		p=rnullb
		[ "$d" = null_blk ] && p=nullb
		devs=""
		for i in 0 1 2 3; do
			devs="$devs --name=d$i --filename=/dev/$p$i"
		done
		# $devs unquoted: one word per option. Each --name has numjobs
		# jobs, job N on CPU N.
		run bind_tags "$2" "$d" "$1" --direct=1 --rw=randread --bs=4k --ioengine=io_uring \
			--thread --gtod_reduce=1 --iodepth=32 --time_based --runtime=$PEAK_RUNTIME \
			--ramp_time=$PEAK_RAMP --numjobs=$CPUS --cpus_allowed=0-$LASTCPU \
			--cpus_allowed_policy=split $devs
	done
}
bind_tags() {
	variants="per-device shared"
	for p in $(host_policies); do variants="$variants host-$p"; done
	# A subset (BIND_VARIANTS="shared host-fair ..."), e.g. to re-measure a change.
	variants=${BIND_VARIANTS:-$variants}
	for v in $variants; do
		mkdir -p "$R/bind_tags/$v"
		case "$v" in
		host-*) echo "rnull: $(bind_params "$v")" ;;
		*) for d in rnull null_blk; do echo "$d: $(bind_params "$v")"; done ;;
		esac >"$R/bind_tags/$v/params"
		# A host-budget row's null_blk is blk-mq's own sharing.
		case "$v" in host-*) echo shared >"$R/bind_tags/$v/ref" ;; esac
	done
	# $variants unquoted: one word per variant.
	alternate "$ROUNDS" bind_tags_round $variants
}

bench_start=$(cut -d' ' -f1 /proc/uptime)
for s in $SCENARIOS; do
	echo "bench: == $s"
	$s
done
unload_all
end=$(cut -d' ' -f1 /proc/uptime)
echo "bench: guest time $(echo "$end $bench_start" | awk '{printf "%d", $1 - $2}') s"
echo "RNULL-RESULTS-BEGIN"
tar -C $R -cz . | base64
echo "RNULL-RESULTS-END"
