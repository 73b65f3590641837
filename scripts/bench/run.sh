#!/usr/bin/env bash
# `make bench`, host side: boot one guest, run scripts/bench/guest.sh, pull
# the fio JSON back from the console, write meta.json and the report.
#
# Environment: KDIR, CPUS (guest vCPUs, default 2), MEM, ROUNDS (5),
# RUNTIME (seconds per fio run, 5), SCENARIOS (default: all).
# Output: bench/results/<time>/{raw/,summary.csv,summary.json,report.md,*.png}
set -euo pipefail
# All of it in a function, read whole before it runs: editing this file
# during a run (which takes up to hours) must not change what bash reads next.
main() {
	top=$(cd "$(dirname "$0")/../.." && pwd)
	cd "$top"
	kdir=${KDIR:-$(scripts/kernel.sh dir)}
	rounds=${ROUNDS:-5} runtime=${RUNTIME:-5}
	fair_ns=${FAIR_COMPLETION_NS:-10000000}
	scenarios=${SCENARIOS:-peak qd_sweep shared_tags memory starvation hotpath fairness block035 policy_switch slices slice_clock slice_single slice_cost}
	stamp=$(date +%Y%m%d-%H%M%S)
	out="bench/results/$stamp"
	mkdir -p "$out/raw"
	start=$SECONDS
	echo "bench: $scenarios; ${CPUS:-2} vCPUs, $rounds rounds, ${runtime}s per run -> $out"
	KCMDLINE="loglevel=4 ${KCMDLINE:-}" scripts/qemu.sh --kdir "$kdir" --name bench \
		--job scripts/bench/guest.sh --timeout 14400 \
		--env "ROUNDS=$rounds" --env "RUNTIME=$runtime" --env "SCENARIOS=$scenarios" --env "FAIR_COMPLETION_NS=$fair_ns" \
		--env "SLICES_US=${SLICES_US:-}" --env "SLICE_DILATION=${SLICE_DILATION:-8}" \
		--env "SLICE_START=${SLICE_START:-completion}" |
		grep --line-buffered '^bench:' || true
	serial=out/logs/latest/serial.log
	tr -d '\r' <"$serial" | sed -n '/^RNULL-RESULTS-BEGIN$/,/^RNULL-RESULTS-END$/p' | sed '1d;$d' |
		base64 -d | tar -xz -C "$out/raw"
	wall=$((SECONDS - start))
	cat >"$out/raw/meta.json" <<JSON
	{
	  "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
	  "guest_cpus": ${CPUS:-2},
	  "guest_mem": "${MEM:-1G}",
	  "rounds": $rounds,
	  "runtime_s": $runtime,
	  "kernel": "$(make -s -C "$kdir" kernelversion 2>/dev/null || echo 6.12)",
	  "host": "$(nproc) cores, QEMU TCG (multi-threaded)",
	  "command": "make bench CPUS=${CPUS:-2} ROUNDS=$rounds RUNTIME=$runtime SCENARIOS='$scenarios'${SLICES_US:+ SLICES_US='$SLICES_US'}${SLICE_DILATION:+ SLICE_DILATION=$SLICE_DILATION}",
	  "wall_seconds": $wall,
	  "scenarios": {
	    "peak": {"title": "Peak IOPS: 4k randread, io_uring, gtod_reduce, irqmode 0, numjobs = vCPUs"},
	    "qd_sweep": {"title": "Queue-depth sweep: 4k randread, io_uring, 1 job, batch = qd/4 from qd 8"},
	    "shared_tags": {"title": "4 devices, per-device vs shared tag set (block/010 style), iodepth 32 each"},
	    "memory": {"title": "Memory-backed 4k random write and read, io_uring, qd 16"},
	    "starvation": {"title": "Depth starvation: 4 jobs per vCPU x qd 64 on 1 hardware queue of depth N"},
	    "hotpath": {"title": "Host tag budget cost: 2 devices busy, irqmode 0, io_uring, every vCPU, host depth 1024 (never binds)"},
	    "fairness": {"title": "Yu Kuai's scenario: host depth 32, $((fair_ns / 1000)) us completions, A iodepth 32, B at a 1% duty cycle ($((10000000 / fair_ns > 0 ? 10000000 / fair_ns : 1)) IOPS)", "completion_us": $((fair_ns / 1000))},
	    "block035": {"title": "blktests block/035: fast (1 ms) vs slow (100 ms) device, iodepth 64 each, host depth 64"},
	    "policy_switch": {"title": "Per-device IOPS while the policy is switched at run time (Kuai's load, $((fair_ns / 1000)) us completions)"},
	    "slices": {"title": "Herrmann's table on the rotational model (model_time_dilation=${SLICE_DILATION:-8}, time_slice_start=${SLICE_START:-completion}): libaio, iodepth 1, jobs pinned, own regions", "dilation": ${SLICE_DILATION:-8}},
	    "slice_clock": {"title": "Slice clock from selection vs from first completion: 250 us, sequential read, model_time_dilation=${SLICE_DILATION:-8}"},
	    "slice_single": {"title": "One sequential stream (1 job, libaio, iodepth 1) under time slices, model_time_dilation=${SLICE_DILATION:-8}"},
	    "slice_cost": {"title": "Peak IOPS with the rotational model off: time_slice_us 0 and 250 vs C null_blk (4k randread, io_uring, irqmode 0)"}
	  }
	}
JSON
	/usr/bin/python3 scripts/bench/report/report.py "$out/raw" "$out"
	ln -sfn "$stamp" bench/results/latest
	echo "bench: done in ${wall}s; report: $out/report.md"
}
main "$@"
exit
