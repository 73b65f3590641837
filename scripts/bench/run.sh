#!/usr/bin/env bash
# `make bench`, host side: boot a guest per vCPU count, run
# scripts/bench/guest.sh, pull the fio JSON back from the console, write
# meta.json and the report.
#
# Environment: KDIR, CLOCK (virtual: time counted in guest instructions, the
# default; wall: multi-threaded TCG on the host clock), CPUS (guest vCPUs,
# default 2), PEAK_CPUS (vCPU counts of the peak matrix, default "1 4"),
# SLICE_CPUS (vCPUs of the slices scenario, default 8: a job per vCPU),
# BIND_CPUS (vCPUs of bind_tags, default 4: a job per device and vCPU),
# BIND_VARIANTS (variants of bind_tags, default: all), LADDER_MODES and
# LADDER_QDS (qd_ladder's modes, default "poll irq", and depths, default
# "1 2 4 8 16 32 64"), MEM,
# ROUNDS (virtual 2, wall 5), RUNTIME (seconds per fio run: virtual 2, wall
# 5), SCENARIOS (default: all), POLICIES_SUBS (sub-scenarios of `policies`,
# default: all), SLICE_WORKLOADS (the slice table's workloads, default
# "read write randread"), RECORD (1: also record the run as the reference
# of its scenarios).
# Output: out/bench/<time>/{raw/c<cpus>/,raw/meta.json,summary.*,report.md,
# *.png}, out of git. With RECORD=1 also bench/results/<scenario>/ for each
# scenario run (replaced) and bench/results/README.md, its index.
set -euo pipefail
# All of it in a function, read whole before it runs: editing this file
# during a run (which takes up to hours) must not change what bash reads next.
main() {
	top=$(cd "$(dirname "$0")/../.." && pwd)
	cd "$top"
	kdir=${KDIR:-$(scripts/kernel.sh dir)}
	# The commit measured, taken before the run writes anything; -dirty if
	# tracked files differ from it (bench/results excepted: a recorded run
	# writes there, and it is not measured).
	commit_json=null
	if rev=$(git rev-parse --short=7 HEAD 2>/dev/null); then
		git diff --quiet HEAD -- . ':(exclude)bench/results' 2>/dev/null || rev="$rev-dirty"
		commit_json="\"$rev\""
	fi
	clock=${CLOCK:-virtual}
	case "$clock" in
	# Virtual time repeats to four digits: two rounds show that, more add
	# nothing. Its seconds are instructions, so a run can be short.
	virtual) rounds=${ROUNDS:-2} runtime=${RUNTIME:-2} ;;
	wall) rounds=${ROUNDS:-5} runtime=${RUNTIME:-5} ;;
	*) echo "bench: CLOCK=$clock is not virtual or wall" >&2; exit 2 ;;
	esac
	# Virtual time repeats only on the QEMU built with the icount fix (see
	# scripts/qemu-build.sh); without it (no deb-src mirror) the run goes
	# on with the installed QEMU and qemu.sh says what that costs.
	qemu_note="installed QEMU"
	if [ "$clock" = virtual ]; then
		if scripts/qemu-build.sh build; then
			qemu_dir=$(dirname "$(scripts/qemu-build.sh path)")
			qemu_note="QEMU $(cat "$qemu_dir/version") with scripts/qemu/*.patch (scripts/qemu-build.sh, key ${qemu_dir##*/qemu-}), round-robin turns: QEMU_ICOUNT_RR_TURN=${QEMU_ICOUNT_RR_TURN:-20000} instructions (0: to the next deadline)"
		else
			echo "bench: the icount-fixed QEMU did not build; using the installed one" >&2
		fi
	fi
	fair_ns=${FAIR_COMPLETION_NS:-10000000}
	scenarios=${SCENARIOS:-peak qd_sweep shared_tags memory starvation hotpath fairness block035 policies policy_switch slices slice_clock slice_single slice_cost first_write qd_ladder bind_tags}
	record=${RECORD:-0}
	case "$record" in
	0 | 1) ;;
	*) echo "bench: RECORD=$record is not 0 or 1" >&2; exit 2 ;;
	esac
	# A scenario names a directory of bench/results that RECORD=1 replaces.
	for s in $scenarios; do
		case "$s" in
		*[!a-z0-9_]*) echo "bench: scenario '$s' is not a scenario name" >&2; exit 2 ;;
		esac
	done
	stamp=$(date +%Y%m%d-%H%M%S)
	out="out/bench/$stamp"
	mkdir -p "$out/raw"
	start=$SECONDS
	# The peak matrix and its first-write and QD-ladder rows run at
	# PEAK_CPUS vCPUs (one hardware queue per vCPU), the slice table at
	# SLICE_CPUS, binding shared tags at BIND_CPUS; everything else at CPUS.
	# One guest boot per vCPU count.
	cpus=${CPUS:-2}
	# boot_cpus SCENARIO: the vCPU counts it runs at. The slice table pins
	# each of up to 8 jobs to a vCPU of its own: a software queue each, as
	# the slice scheduler and BFQ need to tell the jobs apart.
	boot_cpus() {
		case "$1" in
		peak | first_write | qd_ladder) echo "${PEAK_CPUS:-1 4}" ;;
		# Four devices, a job per device and vCPU.
		bind_tags) echo "${BIND_CPUS:-4}" ;;
		slices) echo "${SLICE_CPUS:-8}" ;;
		*) echo "$cpus" ;;
		esac
	}
	boots_json="" all_cpus="" nboots=0 boot=0
	for s in $scenarios; do
		c=$(boot_cpus "$s")
		for n in $c; do
			case " $all_cpus " in *" $n "*) ;; *) all_cpus="$all_cpus $n" nboots=$((nboots + 1)) ;; esac
		done
	done
	for n in $all_cpus; do
		boot=$((boot + 1))
		boot_scen=""
		for s in $scenarios; do
			c=$(boot_cpus "$s")
			case " $c " in *" $n "*) boot_scen="$boot_scen $s" ;; esac
		done
		boot_scen=${boot_scen# }
		echo "bench: boot $boot/$nboots: $boot_scen; $n vCPUs, $clock clock, $rounds rounds, ${runtime}s per run -> $out"
		CPUS=$n RNULL_CLOCK=$clock KCMDLINE="loglevel=4 ${KCMDLINE:-}" scripts/qemu.sh --kdir "$kdir" \
			--name "bench-c$n" --job scripts/bench/guest.sh --timeout 14400 \
			--env "ROUNDS=$rounds" --env "RUNTIME=$runtime" --env "SCENARIOS=$boot_scen" \
			--env "FAIR_COMPLETION_NS=$fair_ns" --env "SLICES_US=${SLICES_US:-}" \
			--env "SLICE_START=${SLICE_START:-completion}" \
			--env "SLICE_SCHEDS=${SLICE_SCHEDS-mq-deadline kyber bfq bfq-idle0 bfq-lowlat0}" \
			--env "PEAK_CONFIGS=${PEAK_CONFIGS:-}" --env "POLICIES_SUBS=${POLICIES_SUBS:-}" \
			--env "BIND_VARIANTS=${BIND_VARIANTS:-}" --env "LADDER_MODES=${LADDER_MODES:-}" \
			--env "LADDER_QDS=${LADDER_QDS:-}" \
			--env "SLICE_WORKLOADS=${SLICE_WORKLOADS:-}" |
			grep --line-buffered '^bench:' || true
		mkdir -p "$out/raw/c$n"
		tr -d '\r' <out/logs/latest/serial.log | sed -n '/^RNULL-RESULTS-BEGIN$/,/^RNULL-RESULTS-END$/p' |
			sed '1d;$d' | base64 -d | tar -xz -C "$out/raw/c$n"
		scen_json=$(printf '"%s", ' $boot_scen)
		boots_json="$boots_json${boots_json:+, }{\"cpus\": $n, \"scenarios\": [${scen_json%, }]}"
	done
	wall=$((SECONDS - start))
	if [ "$clock" = virtual ]; then
		host="$(nproc) cores, $qemu_note, TCG -icount shift=0,sleep=off -rtc clock=vm (virtual time, one thread)"
	else
		host="$(nproc) cores, QEMU TCG (multi-threaded, wall clock)"
	fi
	cat >"$out/raw/meta.json" <<JSON
	{
	  "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
	  "clock": "$clock",
	  "boots": [$boots_json],
	  "guest_cpus": $cpus,
	  "guest_mem": "${MEM:-1G}",
	  "rounds": $rounds,
	  "runtime_s": $runtime,
	  "kernel": "$(make -s -C "$kdir" kernelversion 2>/dev/null || echo 6.12)",
	  "commit": $commit_json,
	  "host": "$host",
	  "command": "make bench${RECORD:+ RECORD=$record} CLOCK=$clock CPUS=$cpus${PEAK_CPUS:+ PEAK_CPUS='$PEAK_CPUS'} ROUNDS=$rounds RUNTIME=$runtime SCENARIOS='$scenarios'${PEAK_CONFIGS:+ PEAK_CONFIGS='$PEAK_CONFIGS'}${POLICIES_SUBS:+ POLICIES_SUBS='$POLICIES_SUBS'}${SLICES_US:+ SLICES_US='$SLICES_US'}${SLICE_WORKLOADS:+ SLICE_WORKLOADS='$SLICE_WORKLOADS'}${SLICE_CPUS:+ SLICE_CPUS=$SLICE_CPUS}${BIND_CPUS:+ BIND_CPUS=$BIND_CPUS}${BIND_VARIANTS:+ BIND_VARIANTS='$BIND_VARIANTS'}${LADDER_MODES:+ LADDER_MODES='$LADDER_MODES'}${LADDER_QDS:+ LADDER_QDS='$LADDER_QDS'}",
	  "wall_seconds": $wall,
	  "scenarios": {
	    "peak": {"title": "Peak matrix: 4k random, io_uring, gtod_reduce, one hardware queue of depth 256 per vCPU, numjobs = vCPUs"},
	    "qd_sweep": {"title": "Queue-depth sweep: 4k randread, io_uring, 1 job, batch = qd/4 from qd 8"},
	    "shared_tags": {"title": "4 devices, per-device vs shared tag set (block/010 style), iodepth 32 each"},
	    "memory": {"title": "Memory-backed 4k random write and read, io_uring, qd 16"},
	    "starvation": {"title": "Depth starvation: 4 jobs per vCPU x qd 64 on 1 hardware queue of depth N"},
	    "hotpath": {"title": "Host tag budget cost: 2 devices busy, irqmode 0, io_uring, every vCPU, host depth 1024 (never binds)"},
	    "fairness": {"title": "Yu Kuai's scenario: host depth 32, $((fair_ns / 1000)) us completions, A iodepth 32, B at a 1% duty cycle ($((10000000 / fair_ns > 0 ? 10000000 / fair_ns : 1)) IOPS)", "completion_us": $((fair_ns / 1000))},
	    "block035": {"title": "blktests block/035: fast (1 ms) vs slow (100 ms) device, iodepth 64 each, host depth 64"},
	    "policies": {"title": "Tag fairness on the maintainers' scenarios, every policy host/policy lists: Kuai, Busch, Axboe's two, block/035, three latencies"},
	    "policy_switch": {"title": "Per-device IOPS while the policy is switched at run time (Kuai's load, $((fair_ns / 1000)) us completions)"},
	    "slices": {"title": "Herrmann's table on the rotational model (rotational_model=1 gb=16, time_slice_start=${SLICE_START:-completion}) beside the block layer's schedulers: libaio, iodepth 1, jobs pinned, own 1 GiB regions"},
	    "slice_mix": {"title": "The mix: one random reader among seven sequential readers on the rotational model (rotational_model=1 gb=16), per job"},
	    "slice_clock": {"title": "Slice clock from selection vs from first completion: 250 us, sequential read, rotational_model=1 gb=16"},
	    "slice_single": {"title": "One sequential stream (1 job, libaio, iodepth 1) under time slices, rotational_model=1 gb=16"},
	    "first_write": {"title": "First writes: a fresh memory-backed device (gb=4) per run, 4k randwrite on never-written pages, io_uring, gtod_reduce, numjobs = vCPUs, 256 MiB in all"},
	    "qd_ladder": {"title": "Polled (io_uring IOPOLL) and interrupt QD ladders: 512 B randread, irqmode=2 completion_nsec=4000 poll_queues=1, batch = qd/4 from qd 8, numjobs = vCPUs"},
	    "bind_tags": {"title": "Shared tags that bind: 4 devices, a job per device and vCPU at iodepth 32, 32 tags for all (blk-mq shared tag set or rnull's host budget), irqmode 0"},
	    "slice_cost": {"title": "Peak IOPS with the rotational model off: time_slice_us 0 and 250 vs C null_blk (4k randread, io_uring, irqmode 0)"}
	  }
	}
JSON
	/usr/bin/python3 scripts/bench/report/report.py "$out/raw" "$out"
	if [ "$record" = 1 ]; then
		for s in $scenarios; do
			if ! compgen -G "$out/raw/c*/$s" >/dev/null; then
				echo "bench: no results for $s; bench/results/$s left as it was" >&2
				continue
			fi
			rm -rf "bench/results/$s"
			/usr/bin/python3 scripts/bench/report/report.py "$out/raw" "bench/results/$s" --family "$s"
		done
		/usr/bin/python3 scripts/bench/report/index.py bench/results
		echo "bench: recorded in bench/results/: $scenarios (index: bench/results/README.md)"
	fi
	echo "bench: done in ${wall}s; report: $out/report.md"
}
main "$@"
exit
