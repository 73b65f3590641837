#!/usr/bin/python3
"""Write synthetic rnull benchmark RESULTS trees: fio 3.33 JSON made up
from the tables below, nothing measured.

Every tree says so: meta.json has `"synthetic": true` (and a command,
host and kernel naming this script) and every fio document a
`"synthetic": true` key, so a report of it is headed SYNTHETIC.

Used by the report's tests, and handy for looking at the plots:

    /usr/bin/python3 scripts/bench/report/synthetic_fixture.py /tmp/synthetic
    /usr/bin/python3 scripts/bench/report/synthetic_fixture.py --boots --clock virtual /tmp/synthetic2
    /usr/bin/python3 scripts/bench/report/report.py /tmp/synthetic /tmp/synthetic-report

generate() writes the old layout (one boot, every scenario). A few cells
have fixed per-round values (FIXED below) so the tests can check the
computed statistics exactly; the rest follow plausible curves plus
deterministic pseudo-random noise.

generate_boots() writes the new layout: boots c1 and c4 with the peak
matrix (with `ref` and `params` files) and hotpath, on the virtual or the
wall clock. Its means are exact (peak_mean(), HOTPATH_FACTOR); the rounds
scatter around them by ROUND_SCATTER[clock], in opposite directions for
rnull and null_blk.

generate_policies() writes scenario `policies` (boot c2, virtual clock):
every sub-scenario under the policies of POLICIES_FAKE, IOPS and bandwidth
as in the POL_* tables below (exact per-job means, rounds scattered by
±1e-4), `r<N>.handoffs` files with the counts of POL_HANDOFFS.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import unittest

ROUNDS = 3

# (scenario, variant, driver, job) -> IOPS per round (cycled if rounds != 3)
FIXED = {
    ("peak", "qd32", "rnull", ""): [300000, 310000, 320000],
    ("peak", "qd32", "null_blk", ""): [330000, 340000, 350000],
    ("hotpath", "tags-off", "rnull", ""): [400000, 404000, 408000],
    ("hotpath", "fair", "rnull", ""): [398000, 402000, 406000],     # within spread
    ("hotpath", "borrow", "rnull", ""): [380000, 382000, 384000],   # outside spread
    ("fairness", "fair", "rnull", "A"): [50000, 50000, 50000],
    ("fairness", "borrow", "rnull", "A"): [95000, 100000, 105000],  # ratio 2.0
    ("block035", "none", "rnull", "fast"): [20000, 21000, 22000],   # fast < slow
    ("block035", "none", "rnull", "slow"): [30000, 30000, 30000],
    ("slice_cost", "qd32-ts0", "rnull", ""): [300000, 310000, 320000],
    ("slice_cost", "qd32-ts250", "rnull", ""): [302000, 312000, 322000],  # within spread
    ("slice_cost", "qd1-ts0", "rnull", ""): [100000, 101000, 102000],
    ("slice_cost", "qd1-ts250", "rnull", ""): [90000, 90500, 91000],     # outside spread
}


def slice_iops(wl, ts, nj):
    """Noise-free cells of Herrmann's table, chosen so that each verdict of
    report.slice_verdicts() has a known outcome (see test_report.py)."""
    if wl == "randread":
        return 170 if (ts, nj) == (1000, 8) else 180     # ts1000-j8 loses 5.6%
    if nj == 1:
        return {0: 1000, 250: 980 if wl == "seqread" else 1000,
                1000: 950 if wl == "seqread" else 990}[ts]  # seqread ts1000 loses 5%
    return {0: 100, 250: 150 if wl == "seqread" else 140,   # gains 1.5 / 1.4
            1000: 720 if wl == "seqread" else 600}[ts]      # 72% of one job
# starvation ctx per job and read ios per job, for depth16 (2 jobs per file)
STARVATION_CTX = (600, 400)
STARVATION_IOS = (5000, 5000)     # -> ctx/IO = 1000 / 10000 = 0.1 for depth16
# fairness: B mean total latency (ns) per policy; completion_us = 1000
FAIRNESS_B_LAT = {"none": 5_000_000, "fair": 1_200_000, "borrow": 1_800_000,
                  "lend": 1_500_000}
COMPLETION_US = 1000

META_SCENARIOS = {
    "peak": {"title": "Peak IOPS: 4k randread, io_uring, irqmode 0"},
    "qd_sweep": {"title": "Queue-depth sweep: 4k randread, 1 job"},
    "shared_tags": {"title": "Shared tag set: 4 devices, one job each"},
    "memory": {"title": "memory_backed=1: 4k sequential write then read"},
    "starvation": {"title": "Tag starvation vs hw_queue_depth"},
    "hotpath": {"title": "Hot path cost of the tag policy"},
    "fairness": {"title": "Tag fairness (Yu Kuai): busy disk A vs light disk B",
                 "completion_us": COMPLETION_US,
                 "notes": "Shared tags, hw_queue_depth=32, B completes in 1 ms."},
    "block035": {"title": "blktests block/035: fast vs slow device"},
    "slices": {"title": "Time slices: IOPS vs numjobs"},
    "slice_clock": {"title": "Slice clock: selection vs first completion"},
    "slice_cost": {"title": "Peak IOPS with the model off: slices 0 and 250"},
    "slice_single": {"title": "One stream under slices"},
    "policy_switch": {"title": "Live policy switch under load"},
}


def fio_job(name, read_iops=0.0, write_iops=0.0, p50=None, p99=None, p999=None,
            lat_mean=None, ctx=0, read_ios=None, write_ios=None, runtime_s=10, bs=4096):
    """Minimal fio 3.33 job entry with the keys report.py reads (bs: block
    size in bytes, for the bandwidth fields)."""
    def direction(iops, ios, active):
        d = {"io_bytes": int(iops * runtime_s * bs), "bw_bytes": int(iops * bs),
             "bw": int(iops * bs / 1024),
             "iops": float(iops), "runtime": runtime_s * 1000,
             "total_ios": int(ios if ios is not None else iops * runtime_s),
             "short_ios": 0, "drop_ios": 0,
             "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
             "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
             "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}}
        if active:
            d["clat_ns"]["percentile"] = {
                "1.000000": int(p50 * 0.5), "50.000000": int(p50),
                "99.000000": int(p99), "99.900000": int(p999),
                "99.990000": int(p999 * 1.5)}
            d["clat_ns"]["mean"] = float(p50)
            d["lat_ns"]["mean"] = float(lat_mean if lat_mean is not None else p50 * 1.05)
        return d

    rd = read_iops > 0 or (write_iops == 0)
    p50 = p50 if p50 is not None else 10000
    p99 = p99 if p99 is not None else p50 * 3
    p999 = p999 if p999 is not None else p50 * 6
    return {"jobname": name, "groupid": 0, "error": 0, "eta": 0,
            "elapsed": runtime_s + 1, "job options": {"name": name},
            "read": direction(read_iops, read_ios, rd and read_iops > 0),
            "write": direction(write_iops, write_ios, write_iops > 0),
            "trim": direction(0, 0, False),
            "usr_cpu": 10.0, "sys_cpu": 80.0, "ctx": int(ctx),
            "majf": 0, "minf": 10}


def fio_doc(jobs):
    """A fio document around `jobs`, marked synthetic."""
    return {"fio version": "fio-3.33", "synthetic": True, "timestamp": 1700000000,
            "timestamp_ms": 1700000000000, "time": "Tue Nov 14 22:13:20 2023",
            "global options": {}, "jobs": jobs,
            "disk_util": [{"name": "rnullb0", "util": 100.0}]}


def fixture_meta(command, **fields):
    """meta.json of a synthetic tree: marked, and naming this script where
    a run would name its command, host and kernel."""
    return {"synthetic": True, "command": f"synthetic_fixture.py {command}",
            "host": "none: synthetic fixture, nothing was measured",
            "kernel": "none (synthetic)", **fields}


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1)


def generate(root, rounds=ROUNDS, seed=1):
    """Write a full synthetic RESULTS tree under root; returns root."""
    rng = random.Random(seed)
    os.makedirs(root, exist_ok=True)

    def noisy(v, rel=0.03):
        return v * (1 + rng.gauss(0, rel))

    def iops_for(key, r, default):
        if key in FIXED:
            vals = FIXED[key]
            return vals[r % len(vals)]
        return noisy(default)

    def put(scen, var, drv, r, jobs):
        write_json(os.path.join(root, scen, var, drv, f"r{r + 1}.json"), fio_doc(jobs))

    drv_scale = {"rnull": 0.93, "null_blk": 1.0, "rnull_mod": 0.91}
    for r in range(rounds):
        # peak
        for var, base in (("qd1", 140000), ("qd32", 340000)):
            for drv, sc in drv_scale.items():
                io = iops_for(("peak", var, drv, ""), r, base * sc)
                put("peak", var, drv, r, [fio_job("peak", read_iops=io,
                                                  p50=1e9 / io * (1 if var == "qd1" else 32))])
        # qd sweep
        for qd in (1, 2, 4, 8, 16, 32, 64):
            for drv, sc in drv_scale.items():
                io = noisy(sc * 400000 * qd / (qd + 2.5))
                p50 = qd / io * 1e9
                put("qd_sweep", f"qd{qd}", drv, r, [fio_job(
                    "qd", read_iops=io, p50=noisy(p50), p99=noisy(p50 * 2.2 + 3000),
                    p999=noisy(p50 * 4 + 9000))])
        # shared tags
        for var, base in (("per-device", 300000), ("shared", 240000)):
            for drv in ("rnull", "null_blk"):
                sc = drv_scale[drv] * (0.97 if (drv, var) == ("rnull", "shared") else 1)
                put("shared_tags", var, drv, r, [fio_job("all", read_iops=noisy(base * sc))])
        # memory
        for var, base in (("write", 90000), ("read", 160000)):
            for drv in ("rnull", "null_blk"):
                io = noisy(base * drv_scale[drv])
                kw = {"write_iops": io} if var == "write" else {"read_iops": io}
                put("memory", var, drv, r, [fio_job("mem", **kw)])
        # starvation: two job entries per file to exercise summing
        for d in (16, 64, 256, 1024):
            for drv in ("rnull", "null_blk"):
                if d == 16 and drv == "rnull":
                    ctx, ios = STARVATION_CTX, STARVATION_IOS
                else:
                    cpi = (0.9 if drv == "rnull" else 1.1) * 16 / d
                    ios = (int(noisy(500000)), int(noisy(500000)))
                    ctx = (int(ios[0] * cpi), int(ios[1] * cpi))
                io = noisy(drv_scale[drv] * 250000 * (1 - 4 / d))
                put("starvation", f"depth{d}", drv, r, [
                    fio_job("s0", read_iops=io / 2, ctx=ctx[0], read_ios=ios[0]),
                    fio_job("s1", read_iops=io / 2, ctx=ctx[1], read_ios=ios[1])])
        # hotpath
        for var in ("tags-off", "none", "fair", "borrow", "lend"):
            io = iops_for(("hotpath", var, "rnull", ""), r, 396000)
            put("hotpath", var, "rnull", r, [fio_job("hot", read_iops=io)])
        # fairness: jobs A and B, no group_reporting
        for pol in ("none", "fair", "borrow", "lend"):
            a = iops_for(("fairness", pol, "rnull", "A"), r,
                         {"none": 110000, "lend": 70000}.get(pol, 60000))
            b_lat = noisy(FAIRNESS_B_LAT[pol], 0.02)
            put("fairness", pol, "rnull", r, [
                fio_job("A", read_iops=a, p50=300000),
                fio_job("B", read_iops=noisy(1e9 / b_lat), p50=b_lat * 0.95,
                        lat_mean=b_lat)])
        # block035
        for pol in ("none", "fair", "borrow", "lend"):
            f = iops_for(("block035", pol, "rnull", "fast"), r, 80000)
            s = iops_for(("block035", pol, "rnull", "slow"), r, 30000)
            put("block035", pol, "rnull", r, [fio_job("fast", read_iops=f),
                                               fio_job("slow", read_iops=s)])
        # slices
        for wl in ("seqread", "seqwrite", "randread"):
            for ts in (0, 250, 1000):
                for nj in (1, 2, 4, 8):
                    io = slice_iops(wl, ts, nj)
                    kw = {"write_iops": io} if wl == "seqwrite" else {"read_iops": io}
                    put("slices", f"{wl}-ts{ts}-j{nj}", "rnull", r, [fio_job("sl", **kw)])
        for v, gain in (("ts0", 1.0), ("selection", 1.02), ("completion", 4.0)):
            for nj in (1, 8):
                io = noisy(2000 if nj == 1 else 20 * gain)
                put("slice_clock", f"{v}-j{nj}", "rnull", r, [fio_job("sc", read_iops=io)])
        for rw, ts, io in (("seqread", 0, 1000), ("seqread", 250, 990), ("seqread", 1000, 960)):
            put("slice_single", f"{rw}-ts{ts}", "rnull", r, [fio_job("ss", read_iops=io)])
        for qd in ("qd1", "qd32"):
            for v in ("ts0", "ts250"):
                io = iops_for(("slice_cost", f"{qd}-{v}", "rnull", ""), r, 300000)
                put("slice_cost", f"{qd}-{v}", "rnull", r, [fio_job("sc", read_iops=io)])
            put("slice_cost", f"{qd}-null_blk", "null_blk", r,
                [fio_job("sc", read_iops=noisy(330000))])

    # policy switch timeline (fio iops logs, 1 s averaging)
    tdir = os.path.join(root, "policy_switch", "timeline", "rnull")
    os.makedirs(tdir, exist_ok=True)
    switches = [(0, "fair"), (20000, "borrow"), (40000, "lend"), (60000, "none")]
    level = {"fair": (50000, 1000), "borrow": (100000, 900),
             "lend": (70000, 950), "none": (110000, 400)}

    def pol_at(t):
        cur = switches[0][1]
        for ts, p in switches:
            if t >= ts:
                cur = p
        return cur

    for idx, job in ((1, "A"), (2, "B")):
        with open(os.path.join(tdir, f"{job}_iops.{idx}.log"), "w") as f:
            for t in range(1000, 80001, 1000):
                v = level[pol_at(t - 1)][0 if job == "A" else 1]
                f.write(f"{t}, {int(noisy(v, 0.02))}, 0, 4096, 0, 0\n")
    with open(os.path.join(tdir, "switches.txt"), "w") as f:
        for t, p in switches:
            f.write(f"{t} {p}\n")

    write_json(os.path.join(root, "meta.json"), fixture_meta(
        f"--rounds {rounds} --seed {seed}",
        date="2025-01-01T12:00:00Z", guest_cpus=2, guest_mem="1G",
        rounds=rounds, wall_seconds=1234, scenarios=META_SCENARIOS))
    return root


# --------------------------------------------------------------------------
# new layout: several boots, the peak matrix

BOOT_CPUS = (1, 4)
# null_blk IOPS per vCPU at qd1 by variant kind; qd32 gives 1.5 times that
PEAK_NULL_BLK = {"irq0": 200000, "irq1": 150000, "irq2": 60000,
                 "mem-write": 90000, "mem-read": 120000}
RNULL_AHEAD = 1.03                       # rnull / null_blk, unless below
RNULL_FACTOR = {(1, "irq1-qd1"): 0.99,   # just behind: must give "behind"
                (4, "irq2-qd1"): 0.90}   # clearly behind
RNULL_MOD_FACTOR = 0.95                  # rnull_mod / null_blk (c1, irq0 only)
HOST_COST = 0.997                        # rnull(host-*) / rnull(ref) ...
HOST_COST_FIXED = {(4, "host-lend-qd32"): 0.98}   # ... except this one (> 1 %)
TS250_COST = 0.995
HOTPATH_FACTOR = {"tags-off": 1.0, "fair": 1.0005, "borrow": 0.98}
HOTPATH_BASE = 300000
# per-round multipliers, cycled; opposite for null_blk
ROUND_SCATTER = {"virtual": (1 - 1e-5, 1.0, 1 + 1e-5), "wall": (0.99, 1.0, 1.01)}


def peak_variants(cpus):
    """[(variant, [drivers], ref)] of the peak matrix of one boot."""
    out = []
    for kind in ("irq0", "irq1", "irq2", "mem-write", "mem-read"):
        for qd in (1, 32):
            drvs = ["rnull", "null_blk"] + (["rnull_mod"] if (cpus, kind) == (1, "irq0") else [])
            out.append((f"{kind}-qd{qd}", drvs, None))
    for qd in (1, 32):
        for pol in ("fair", "borrow", "lend", "none"):
            out.append((f"host-{pol}-qd{qd}", ["rnull"], f"irq0-qd{qd}"))
    for qd in (1, 32):
        out.append((f"ts250-qd{qd}", ["rnull"], f"irq0-qd{qd}"))
    return out


def peak_mean(cpus, var, drv):
    """The exact mean IOPS of a peak matrix cell."""
    kind, qd = var.rsplit("-qd", 1)
    if kind.startswith("host-") or kind.startswith("ts"):
        cost = (HOST_COST_FIXED.get((cpus, var), HOST_COST) if kind.startswith("host-")
                else TS250_COST)
        return peak_mean(cpus, f"irq0-qd{qd}", "rnull") * cost
    nb = PEAK_NULL_BLK[kind] * cpus * (1.5 if qd == "32" else 1.0)
    if drv == "null_blk":
        return nb
    if drv == "rnull_mod":
        return nb * RNULL_MOD_FACTOR
    return nb * RNULL_FACTOR.get((cpus, var), RNULL_AHEAD)


def generate_boots(root, clock="virtual", rounds=ROUNDS, tweak=None):
    """Write a new-layout RESULTS tree; tweak {(cpus, variant, driver): f}
    multiplies those cells' IOPS (a second, different synthetic run)."""
    tweak = tweak or {}
    scatter = ROUND_SCATTER[clock]

    def put(cpus, scen, var, drv, mean, write=False):
        for r in range(rounds):
            m = scatter[r % len(scatter)]
            io = mean * tweak.get((cpus, var, drv), 1.0) * (m if drv != "null_blk" else 2 - m)
            kw = {"write_iops": io} if write else {"read_iops": io}
            write_json(os.path.join(root, f"c{cpus}", scen, var, drv, f"r{r + 1}.json"),
                       fio_doc([fio_job(scen, **kw)]))

    for cpus in BOOT_CPUS:
        for var, drvs, ref in peak_variants(cpus):
            for drv in drvs:
                put(cpus, "peak", var, drv, peak_mean(cpus, var, drv),
                    write=var.startswith("mem-write"))
            vdir = os.path.join(root, f"c{cpus}", "peak", var)
            if ref:
                with open(os.path.join(vdir, "ref"), "w") as f:
                    f.write(ref + "\n")
            with open(os.path.join(vdir, "params"), "w") as f:
                for drv in drvs:
                    f.write(f"{drv}: irqmode={var[3] if var.startswith('irq') else 0} "
                            f"submit_queues={cpus}\n")
        for var, fac in HOTPATH_FACTOR.items():
            put(cpus, "hotpath", var, "rnull", HOTPATH_BASE * cpus * fac)
    write_json(os.path.join(root, "meta.json"), fixture_meta(
        f"--boots --clock {clock} --rounds {rounds}",
        date="2025-02-01T12:00:00Z", clock=clock, guest_mem="1G",
        boots=[{"cpus": c, "scenarios": ["peak", "hotpath"]} for c in BOOT_CPUS],
        rounds=rounds, wall_seconds=2345,
        scenarios={"peak": {"title": "Peak matrix: 4k randread, io_uring, gtod_reduce"},
                   "hotpath": META_SCENARIOS["hotpath"]}))
    return root


# --------------------------------------------------------------------------
# scenario `policies`: sub-scenario × policy

POLICIES_FAKE = ("none", "fair", "borrow", "lend", "window")
POL_CPUS = 2
# Kuai: A's IOPS (borrow / fair = 1.9375: passes); B does 10 IOPS.
POL_KUAI_A = {"none": 32000, "fair": 16000, "borrow": 31000, "lend": 24000, "window": 30000}
POL_KUAI_B_P99 = 1_100_000
# Busch: the heavy job, the light job and the light job alone (qd1_alone).
POL_HEAVY = 14000
POL_LIGHT = {"none": 300, "fair": 2650, "borrow": 2400, "lend": 2600, "window": 2690}
POL_SOLO = 2700          # borrow: 2400/2700 = 0.889 < 0.9 fails; none 0.111 loses
POL_LIGHT_P99 = {"none": 9_000_000, "fair": 400_000, "borrow": 480_000, "lend": 410_000,
                 "window": 390_000}
# Axboe b: MiB/s of devices a and b (128 KiB requests); lend 0.923 fails.
POL_SPLIT = {"none": (700, 300), "fair": (500, 500), "borrow": (510, 490),
             "lend": (520, 480), "window": (500, 495)}
# block/035: fast and slow IOPS; none has fast < slow (fails).
POL_035 = {"none": (500, 600), "fair": (30000, 320), "borrow": (31000, 320),
           "lend": (30500, 320), "window": (30000, 320)}
POL_LATENCIES = {"100us": 40000, "1ms": 4000, "10ms": 400}
# Slow hand-offs per (variant, round) while I/O ran; the rest 0.
# busch-borrow fails.
POL_HANDOFFS = {("busch-borrow", 1): 3}
# ... over the whole runs (fio's start and end too); the rest as
# POL_HANDOFFS. latencies-window's are all at the edges: it passes.
POL_HANDOFFS_RUN = {("latencies-window", 2): 2}
POL_SCATTER = (1 - 1e-4, 1 + 1e-4)


def policy_jobs(sub, pol):
    """[(fio job kwargs)] of one run of sub-scenario `sub` under `pol`,
    before the per-round scatter; a policy without values of its own has
    fair's."""
    pol = pol if pol in POLICIES_FAKE else "fair"
    if sub == "kuai":
        return [dict(name="A", read_iops=POL_KUAI_A[pol], p50=2_000_000),
                dict(name="B", read_iops=10, p50=1_000_000, p99=POL_KUAI_B_P99)]
    if sub == "busch":
        return [dict(name="heavy", write_iops=POL_HEAVY, p50=18_000_000, bs=131072),
                dict(name="light", read_iops=POL_LIGHT[pol], p50=360_000,
                     p99=POL_LIGHT_P99[pol], bs=512)]
    if sub == "qd1_alone":
        return [dict(name="light", read_iops=POL_SOLO, p50=360_000, p99=370_000, bs=512)]
    if sub == "qd32_split":
        return [dict(name=j, read_iops=mib * 8, p50=4_000_000, bs=131072)
                for j, mib in zip(("a", "b"), POL_SPLIT[pol])]
    if sub == "block035":
        return [dict(name=j, read_iops=v) for j, v in zip(("fast", "slow"), POL_035[pol])]
    return [dict(name=j, read_iops=v) for j, v in POL_LATENCIES.items()]


def generate_policies(root, rounds=2, policies=POLICIES_FAKE, handoffs=None):
    """Write scenario `policies` (new layout, boot c2, virtual clock);
    handoffs {(variant, round): n} replaces POL_HANDOFFS (and then the
    whole runs count as many)."""
    whole = POL_HANDOFFS_RUN if handoffs is None else {}
    handoffs = POL_HANDOFFS if handoffs is None else handoffs
    subs = ("kuai", "busch", "qd1_alone", "qd32_split", "block035", "latencies")
    for sub in subs:
        for pol in policies:
            var = f"{sub}-{pol}"
            vdir = os.path.join(root, f"c{POL_CPUS}", "policies", var)
            for r in range(1, rounds + 1):
                m = POL_SCATTER[(r - 1) % len(POL_SCATTER)]
                jobs = []
                for kw in policy_jobs(sub, pol):
                    kw = dict(kw)
                    for k in ("read_iops", "write_iops"):
                        if k in kw:
                            kw[k] *= m
                    jobs.append(fio_job(kw.pop("name"), **kw))
                write_json(os.path.join(vdir, "rnull", f"r{r}.json"), fio_doc(jobs))
                n = handoffs.get((var, r), 0)
                with open(os.path.join(vdir, "rnull", f"r{r}.handoffs"), "w") as f:
                    f.write(f"{n}\n")
                with open(os.path.join(vdir, "rnull", f"r{r}.handoffs_run"), "w") as f:
                    f.write(f"{whole.get((var, r), n)}\n")
            with open(os.path.join(vdir, "params"), "w") as f:
                f.write(f"rnull: nr_devices=2 host_queue_depth=32 tag_policy={pol}\n")
    write_json(os.path.join(root, "meta.json"), fixture_meta(
        f"--policies --rounds {rounds}",
        date="2025-03-01T12:00:00Z", clock="virtual", guest_mem="1G",
        boots=[{"cpus": POL_CPUS, "scenarios": ["policies"]}],
        rounds=rounds, wall_seconds=600,
        scenarios={"policies": {"title": "Tag fairness on the maintainers' scenarios"}}))
    return root


def main():
    ap = argparse.ArgumentParser(description="Write a synthetic rnull RESULTS tree "
                                             "(marked synthetic; nothing is measured).")
    ap.add_argument("outdir")
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--boots", action="store_true",
                    help="new layout (boots c1 and c4, peak matrix)")
    ap.add_argument("--policies", action="store_true",
                    help="new layout, scenario policies only (boot c2, virtual clock)")
    ap.add_argument("--clock", choices=("virtual", "wall"), default="virtual",
                    help="with --boots: the clock in meta.json")
    a = ap.parse_args()
    if a.policies:
        generate_policies(a.outdir, a.rounds)
    elif a.boots:
        generate_boots(a.outdir, a.clock, a.rounds)
    else:
        generate(a.outdir, a.rounds, a.seed)
    print(a.outdir)


class ResultsDirCase(unittest.TestCase):
    """A test case with a fresh `results/` and `out/` under a temporary
    directory (`self.root`, `self.out`), removed after each test."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.join(self.tmp.name, "results")
        self.out = os.path.join(self.tmp.name, "out")

    def tearDown(self):
        self.tmp.cleanup()

if __name__ == "__main__":
    main()
