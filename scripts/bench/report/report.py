#!/usr/bin/python3
"""Host-side report generator for rnull benchmark results.

Reads the fio JSON tree produced by the guest benchmark run

    RESULTS/meta.json
    RESULTS/<scenario>/<variant>/<driver>/r<N>.json
    RESULTS/policy_switch/timeline/<driver>/<job>_iops.<k>.log + switches.txt

and writes summary.csv, summary.json, report.md and PNG plots into OUTDIR.

Only the standard library is required for the tables; matplotlib (Agg) is
used for the plots when it is importable (otherwise plots are skipped with a
warning).  See README.md in this directory.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import statistics
import sys
from dataclasses import dataclass, field

# --------------------------------------------------------------------------
# configuration

SCENARIO_ORDER = [
    "peak", "qd_sweep", "shared_tags", "memory", "starvation", "hotpath",
    "fairness", "block035", "slices", "slice_clock", "slice_single", "slice_cost", "policy_switch",
]
DRIVER_ORDER = ["rnull", "null_blk", "rnull_mod"]
POLICY_ORDER = ["none", "fair", "borrow", "lend"]
SLICE_WORKLOADS = ["seqread", "seqwrite", "randread"]
SLICE_RE = re.compile(r"^(?P<wl>.+?)-ts(?P<ts>\d+)-j(?P<nj>\d+)$")
VARIANT_ORDER = {
    "peak": ["qd1", "qd32"],
    "shared_tags": ["per-device", "shared"],
    "memory": ["write", "read"],
    "hotpath": ["tags-off"] + POLICY_ORDER,
    "fairness": POLICY_ORDER,
    "block035": POLICY_ORDER,
}
# Scenarios without group_reporting: one row per fio job.
PER_JOB_SCENARIOS = {"fairness", "block035"}
JOB_ORDER = {"fairness": ["A", "B"], "block035": ["fast", "slow"]}
REF_DRIVER = "null_blk"
HOTPATH_REF_VARIANT = "tags-off"
FAIRNESS_TARGET_RATIO = 1.8
FAIRNESS_LAT_FACTOR = 2.0
# Herrmann's best slice and the targets for it.
SLICE_GAIN_TS = 250
SLICE_GAIN_TARGET = 1.45
SLICE_LOSS_FLOOR = 0.97
SLICE_CFQ_TARGET = 0.70
# Header of the ratio column where the reference is not C null_blk.
RATIO_HEAD = {
    "hotpath": f"ratio vs {HOTPATH_REF_VARIANT}",
    "slices": "ratio vs ts0, same jobs",
    "slice_clock": "ratio vs ts0, same jobs",
    "slice_single": "ratio vs ts0, same rw",
    "slice_cost": "ratio vs rnull ts0, same qd",
}

PCT_KEYS = {"p50": "50.000000", "p99": "99.000000", "p999": "99.900000"}
PCT_LABEL = {"p50": "p50", "p99": "p99", "p999": "p99.9"}

DRIVER_COLORS = {"rnull": "#1f77b4", "null_blk": "#ff7f0e",
                 "rnull_mod": "#2ca02c"}
EXTRA_COLORS = ["#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                "#bcbd22", "#17becf"]
DPI = 110

CSV_FIELDS = [
    "scenario", "variant", "driver", "job", "n",
    "iops_mean", "iops_stdev", "iops_min", "iops_max",
    "ref", "ratio", "ratio_spread",
    "p50_ns", "p99_ns", "p999_ns", "lat_mean_ns", "ctx_per_io",
]

# --------------------------------------------------------------------------
# warnings

WARNINGS: list[str] = []


def warn(msg: str) -> None:
    """Record a warning and print it to stderr (deduplicated)."""
    if msg in WARNINGS:
        return
    WARNINGS.append(msg)
    print(f"report: warning: {msg}", file=sys.stderr)


# --------------------------------------------------------------------------
# helpers

def natural_key(s: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(s))]


def slices_key(v: str):
    m = SLICE_RE.match(v)
    if not m:
        return (1, natural_key(v))
    wl = m["wl"]
    wi = SLICE_WORKLOADS.index(wl) if wl in SLICE_WORKLOADS else len(SLICE_WORKLOADS)
    return (0, wi, wl, int(m["ts"]), int(m["nj"]))


def variant_order(scen: str, variants):
    if scen == "slices":
        return sorted(variants, key=slices_key)
    return ordered(variants, VARIANT_ORDER.get(scen, ()))


def ordered(items, preferred=()):
    """Sort `items`: those in `preferred` first (in that order), the rest
    in natural order."""
    items = list(dict.fromkeys(items))
    pref = [p for p in preferred if p in items]
    rest = sorted((i for i in items if i not in preferred), key=natural_key)
    return pref + rest


def dig(obj, *keys, default=None, ctx=None):
    """obj[k0][k1]... or `default`; warns (with ctx) when a key is missing."""
    cur = obj
    for k in keys:
        if isinstance(cur, dict) and k in cur:
            cur = cur[k]
        elif isinstance(cur, list) and isinstance(k, int) and -len(cur) <= k < len(cur):
            cur = cur[k]
        else:
            if ctx is not None:
                warn(f"{ctx}: missing key {'.'.join(str(x) for x in keys)}")
            return default
    return cur


def num(v, default=None):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return default
    return f if math.isfinite(f) else default


def mean_or_none(vals):
    vals = [v for v in vals if v is not None]
    return statistics.fmean(vals) if vals else None


def stdev0(vals):
    vals = [v for v in vals if v is not None]
    return statistics.stdev(vals) if len(vals) > 1 else 0.0


def ratio_spread(ma, sa, mb, sb):
    """ratio ma/mb and its propagated spread; (None, None) if undefined."""
    if ma is None or mb is None or mb == 0:
        return None, None
    r = ma / mb
    if ma == 0:
        return r, 0.0
    return r, abs(r) * math.sqrt((sa / ma) ** 2 + (sb / mb) ** 2)


def variant_number(v: str):
    m = re.search(r"(\d+)", v)
    return int(m.group(1)) if m else None




# --------------------------------------------------------------------------
# fio parsing

@dataclass
class Sample:
    """Metrics of one (aggregated) fio job in one round."""
    iops: float
    p50: float | None = None
    p99: float | None = None
    p999: float | None = None
    lat_mean: float | None = None
    ctx: float | None = None
    total_ios: float | None = None


def load_json(path: str):
    """Load a fio JSON file, tolerating non-JSON text before/after it."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        warn(f"{path}: cannot read: {e}")
        return None
    start = text.find("{")
    if start < 0:
        warn(f"{path}: no JSON object found")
        return None
    try:
        obj, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as e:
        warn(f"{path}: invalid JSON: {e}")
        return None
    if not isinstance(obj, dict):
        warn(f"{path}: top-level JSON is not an object")
        return None
    return obj


def _main_dir(job: dict) -> str:
    """The direction ('read'/'write') that carried I/O (read preferred)."""
    r = num(dig(job, "read", "total_ios"), 0) or num(dig(job, "read", "iops"), 0)
    w = num(dig(job, "write", "total_ios"), 0) or num(dig(job, "write", "iops"), 0)
    return "write" if (w and not r) else "read"


def job_sample(job: dict, ctx: str) -> Sample:
    iops = 0.0
    have = False
    for d in ("read", "write"):
        v = num(dig(job, d, "iops"))
        if v is not None:
            iops += v
            have = True
    if not have:
        warn(f"{ctx}: missing key read.iops/write.iops")
    d = _main_dir(job)
    pct = dig(job, d, "clat_ns", "percentile", default={}) or {}
    s = Sample(iops=iops)
    for attr, key in PCT_KEYS.items():
        setattr(s, attr, num(pct.get(key)) if isinstance(pct, dict) else None)
    s.lat_mean = num(dig(job, d, "lat_ns", "mean"))
    s.ctx = num(dig(job, "ctx"))
    tio = [num(dig(job, x, "total_ios")) for x in ("read", "write")]
    s.total_ios = sum(t for t in tio if t is not None) if any(
        t is not None for t in tio) else None
    return s


def parse_fio(path: str, per_job: bool) -> dict[str, Sample] | None:
    """Parse one fio result file -> {job_key: Sample}.

    Aggregated mode (per_job False): single key "" with IOPS summed over all
    jobs, latency percentiles from jobs[0], ctx and total_ios summed.
    Per-job mode: one key per job name (jobname)."""
    obj = load_json(path)
    if obj is None:
        return None
    jobs = obj.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        warn(f"{path}: missing or empty key jobs")
        return None
    samples = []
    for i, j in enumerate(jobs):
        if not isinstance(j, dict):
            warn(f"{path}: jobs[{i}] is not an object")
            continue
        name = str(j.get("jobname", f"job{i}"))
        samples.append((name, job_sample(j, f"{path}: jobs[{i}]")))
    if not samples:
        return None
    if per_job:
        out: dict[str, Sample] = {}
        for name, s in samples:
            if name in out:  # same name twice: sum IOPS, keep first latencies
                out[name].iops += s.iops
            else:
                out[name] = s
        return out
    first = samples[0][1]
    agg = Sample(iops=sum(s.iops for _, s in samples), p50=first.p50,
                 p99=first.p99, p999=first.p999, lat_mean=first.lat_mean)
    ctxs = [s.ctx for _, s in samples if s.ctx is not None]
    tios = [s.total_ios for _, s in samples if s.total_ios is not None]
    agg.ctx = sum(ctxs) if ctxs else None
    agg.total_ios = sum(tios) if tios else None
    return {"": agg}


# --------------------------------------------------------------------------
# collection

RFILE_RE = re.compile(r"^r(\d+)\.json$")

# data[scenario][variant][driver][job] -> list[Sample]
Data = dict


def collect(results: str) -> Data:
    data: Data = {}
    if not os.path.isdir(results):
        warn(f"{results}: not a directory")
        return data
    for scen in sorted(os.listdir(results)):
        sdir = os.path.join(results, scen)
        if not os.path.isdir(sdir):
            continue
        per_job = scen in PER_JOB_SCENARIOS
        for var in sorted(os.listdir(sdir)):
            vdir = os.path.join(sdir, var)
            if not os.path.isdir(vdir):
                continue
            for drv in sorted(os.listdir(vdir)):
                ddir = os.path.join(vdir, drv)
                if not os.path.isdir(ddir):
                    continue
                files = sorted((f for f in os.listdir(ddir) if RFILE_RE.match(f)),
                               key=natural_key)
                for fn in files:
                    res = parse_fio(os.path.join(ddir, fn), per_job)
                    if not res:
                        continue
                    for job, s in res.items():
                        (data.setdefault(scen, {}).setdefault(var, {})
                         .setdefault(drv, {}).setdefault(job, []).append(s))
    return data


def reference_key(scen: str, var: str, drv: str):
    """(variant, driver, label) of the row `var`/`drv` is compared with."""
    if scen == "hotpath":
        return HOTPATH_REF_VARIANT, drv, f"{drv}/{HOTPATH_REF_VARIANT}"
    if scen == "slice_cost":
        ref = var.split("-")[0] + "-ts0"
        return ref, "rnull", f"rnull/{ref}"
    if scen == "slice_single":
        ref = var.rsplit("-", 1)[0] + "-ts0"
        return ref, drv, f"{drv}/{ref}"
    if scen == "slice_clock":
        ref = "ts0-" + var.rsplit("-", 1)[-1]
        return ref, drv, f"{drv}/{ref}"
    m = SLICE_RE.match(var) if scen == "slices" else None
    if m:
        ref = f"{m['wl']}-ts0-j{m['nj']}"
        return ref, drv, f"{drv}/{ref}"
    return var, REF_DRIVER, REF_DRIVER


def summarize(data: Data) -> list[dict]:
    """One stats row per (scenario, variant, driver, job)."""
    rows = []
    index = {}
    for scen in ordered(data, SCENARIO_ORDER):
        for var in variant_order(scen, data[scen]):
            for drv in ordered(data[scen][var], DRIVER_ORDER):
                for job in ordered(data[scen][var][drv], JOB_ORDER.get(scen, ())):
                    ss = data[scen][var][drv][job]
                    iops = [s.iops for s in ss]
                    row = {
                        "scenario": scen, "variant": var, "driver": drv,
                        "job": job, "n": len(ss),
                        "iops_mean": statistics.fmean(iops),
                        "iops_stdev": stdev0(iops),
                        "iops_min": min(iops), "iops_max": max(iops),
                        "ref": None, "ratio": None, "ratio_spread": None,
                    }
                    for attr in PCT_KEYS:
                        vals = [getattr(s, attr) for s in ss]
                        row[f"{attr}_ns"] = mean_or_none(vals)
                        row[f"{attr}_ns_stdev"] = stdev0(vals) if any(
                            v is not None for v in vals) else None
                    row["lat_mean_ns"] = mean_or_none([s.lat_mean for s in ss])
                    row["lat_mean_ns_stdev"] = stdev0([s.lat_mean for s in ss])
                    cpi = [s.ctx / s.total_ios for s in ss
                           if s.ctx is not None and s.total_ios]
                    row["ctx_per_io"] = statistics.fmean(cpi) if cpi else None
                    row["ctx_per_io_stdev"] = stdev0(cpi) if cpi else None
                    rows.append(row)
                    index[(scen, var, drv, job)] = row
    for row in rows:
        key = (row["scenario"], row["variant"], row["driver"], row["job"])
        rvar, rdrv, rname = reference_key(*key[:3])
        rkey = (row["scenario"], rvar, rdrv, row["job"])
        if rkey == key:
            row.update(ref=rname, ratio=1.0, ratio_spread=0.0)
            continue
        ref = index.get(rkey)
        if ref is None:
            continue
        r, sp = ratio_spread(row["iops_mean"], row["iops_stdev"],
                             ref["iops_mean"], ref["iops_stdev"])
        row.update(ref=rname, ratio=r, ratio_spread=sp)
    return rows


def find_row(rows, scen, var, drv, job=""):
    for r in rows:
        if (r["scenario"], r["variant"], r["driver"], r["job"]) == (scen, var, drv, job):
            return r
    return None


# --------------------------------------------------------------------------
# policy switch timeline

@dataclass
class Timeline:
    driver: str
    variant: str
    series: dict = field(default_factory=dict)   # job -> ([t_ms], [iops])
    switches: list = field(default_factory=list)  # [(t_ms, policy)]
    segments: list = field(default_factory=list)  # rows for the table


LOG_RE = re.compile(r"^(?P<job>.+?)_iops(?:\.(?P<idx>\d+))?\.log$")


def parse_iops_log(path: str):
    pts = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for ln, line in enumerate(f, 1):
                parts = [p.strip() for p in line.split(",")]
                if len(parts) < 2 or not parts[0]:
                    continue
                t, v = num(parts[0]), num(parts[1])
                if t is None or v is None:
                    warn(f"{path}:{ln}: unparsable line")
                    continue
                pts.append((t, v))
    except OSError as e:
        warn(f"{path}: cannot read: {e}")
    return pts


def bin_points(pts):
    """Sum values sharing a time bin (read+write lines, several log files).
    The bin width is the median spacing of the distinct timestamps."""
    if not pts:
        return [], []
    ts = sorted({t for t, _ in pts})
    diffs = sorted(b - a for a, b in zip(ts, ts[1:]) if b > a)
    width = diffs[len(diffs) // 2] if diffs else 1.0
    bins: dict[int, float] = {}
    for t, v in pts:
        k = int(round(t / width))
        bins[k] = bins.get(k, 0.0) + v
    ks = sorted(bins)
    return [k * width for k in ks], [bins[k] for k in ks]


def parse_switches(path: str):
    out = []
    if not os.path.exists(path):
        warn(f"{path}: missing")
        return out
    with open(path, encoding="utf-8", errors="replace") as f:
        for ln, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            t = num(parts[0])
            if t is None or len(parts) < 2:
                warn(f"{path}:{ln}: expected '<t_ms> <policy>'")
                continue
            out.append((t, parts[1]))
    return sorted(out)


def collect_timelines(results: str) -> list[Timeline]:
    base = os.path.join(results, "policy_switch")
    tls = []
    if not os.path.isdir(base):
        return tls
    for var in sorted(os.listdir(base)):
        vdir = os.path.join(base, var)
        if not os.path.isdir(vdir):
            continue
        for drv in ordered([d for d in os.listdir(vdir)
                            if os.path.isdir(os.path.join(vdir, d))], DRIVER_ORDER):
            ddir = os.path.join(vdir, drv)
            logs = [f for f in os.listdir(ddir) if LOG_RE.match(f)]
            if not logs:
                continue
            tl = Timeline(driver=drv, variant=var)
            per_job: dict[str, list] = {}
            for fn in sorted(logs, key=natural_key):
                job = LOG_RE.match(fn).group("job")
                per_job.setdefault(job, []).extend(parse_iops_log(os.path.join(ddir, fn)))
            for job in ordered(per_job, ["A", "B"]):
                t, v = bin_points(per_job[job])
                if t:
                    tl.series[job] = (t, v)
                else:
                    warn(f"{ddir}: no samples for job {job}")
            tl.switches = parse_switches(os.path.join(ddir, "switches.txt"))
            tl.segments = timeline_segments(tl)
            tls.append(tl)
    return tls


def timeline_segments(tl: Timeline) -> list[dict]:
    """Mean IOPS per job between consecutive policy switches."""
    if not tl.series:
        return []
    t_end = max(t[-1] for t, _ in tl.series.values())
    t_beg = min(t[0] for t, _ in tl.series.values())
    # A fio log sample stamped t averages the window ending at t, so a
    # segment [a, b) owns the samples with a < t <= b.
    bounds = []
    sw = tl.switches
    if not sw or sw[0][0] >= t_beg:
        bounds.append((-math.inf, sw[0][0] if sw else t_end, "(start)"))
    for i, (t, pol) in enumerate(sw):
        nxt = sw[i + 1][0] if i + 1 < len(sw) else t_end
        bounds.append((t, nxt, pol))
    segs = []
    for a, b, pol in bounds:
        seg = {"policy": pol, "start_ms": max(a, 0.0) if a == -math.inf else a,
               "end_ms": b, "jobs": {}}
        for job, (ts, vs) in tl.series.items():
            sel = [v for t, v in zip(ts, vs) if a < t <= b]
            seg["jobs"][job] = statistics.fmean(sel) if sel else None
        if pol == "(start)" and not any(v is not None for v in seg["jobs"].values()):
            continue  # nothing logged before the first switch
        segs.append(seg)
    return segs


# --------------------------------------------------------------------------
# verdicts

def verdicts(rows: list[dict], meta: dict) -> dict:
    out: dict[str, list[dict]] = {}
    scen_rows = {}
    for r in rows:
        scen_rows.setdefault(r["scenario"], []).append(r)

    # fairness: A(borrow)/A(fair) >= 1.8, B mean latency <= 2x completion
    if "fairness" in scen_rows:
        v = []
        drivers = ordered({r["driver"] for r in scen_rows["fairness"]}, DRIVER_ORDER)
        comp_us = num(dig(meta, "scenarios", "fairness", "completion_us"))
        if comp_us is None:
            warn("meta.json: scenarios.fairness.completion_us missing; "
                 "skipping B latency verdict")
        for drv in drivers:
            a_b = find_row(rows, "fairness", "borrow", drv, "A")
            a_f = find_row(rows, "fairness", "fair", drv, "A")
            if a_b and a_f:
                r, sp = ratio_spread(a_b["iops_mean"], a_b["iops_stdev"],
                                     a_f["iops_mean"], a_f["iops_stdev"])
                ok = r is not None and r >= FAIRNESS_TARGET_RATIO
                v.append({"check": "A_borrow_over_fair", "driver": drv,
                          "value": r, "spread": sp,
                          "target": FAIRNESS_TARGET_RATIO, "pass": ok,
                          "text": (f"{drv}: A IOPS borrow/fair = {fmt_ratio(r, sp)} "
                                   f"(target ≥ {FAIRNESS_TARGET_RATIO}) → "
                                   f"**{'PASS' if ok else 'FAIL'}**")})
            else:
                warn(f"fairness/{drv}: need job A under both 'borrow' and 'fair'")
            if comp_us is None:
                continue
            limit_ns = FAIRNESS_LAT_FACTOR * comp_us * 1000
            for r in scen_rows["fairness"]:
                if r["driver"] != drv or r["job"] != "B":
                    continue
                lat = r["lat_mean_ns"]
                if lat is None:
                    warn(f"fairness/{r['variant']}/{drv}: B has no lat_ns.mean")
                    continue
                ok = lat <= limit_ns
                v.append({"check": "B_latency", "driver": drv,
                          "policy": r["variant"], "value": lat,
                          "limit": limit_ns, "pass": ok,
                          "text": (f"{drv}/{r['variant']}: B mean latency "
                                   f"{fmt_us(lat)} µs vs limit {fmt_us(limit_ns)} µs "
                                   f"(2 × {comp_us:g} µs completion) → "
                                   f"**{'PASS' if ok else 'FAIL'}**")})
        out["fairness"] = v

    # block035: fast >= slow per policy
    if "block035" in scen_rows:
        v = []
        seen = {(r["variant"], r["driver"]) for r in scen_rows["block035"]}
        for var, drv in sorted(seen, key=lambda x: (
                POLICY_ORDER.index(x[0]) if x[0] in POLICY_ORDER else 99,
                natural_key(x[0]), natural_key(x[1]))):
            f = find_row(rows, "block035", var, drv, "fast")
            s = find_row(rows, "block035", var, drv, "slow")
            if not (f and s):
                warn(f"block035/{var}/{drv}: need jobs 'fast' and 'slow'")
                continue
            ok = f["iops_mean"] >= s["iops_mean"]
            v.append({"check": "fast_ge_slow", "driver": drv, "policy": var,
                      "fast": f["iops_mean"], "slow": s["iops_mean"], "pass": ok,
                      "text": (f"{drv}/{var}: fast {fmt_iops(f['iops_mean'])} "
                               f"{'≥' if ok else '<'} slow {fmt_iops(s['iops_mean'])} → "
                               f"**{'PASS' if ok else 'FAIL'}**")})
        out["block035"] = v

    # hotpath: difference vs tags-off, compared with combined stdev
    if "hotpath" in scen_rows:
        v = []
        for r in scen_rows["hotpath"]:
            if r["variant"] == HOTPATH_REF_VARIANT:
                continue
            ref = find_row(rows, "hotpath", HOTPATH_REF_VARIANT, r["driver"], r["job"])
            if ref is None:
                warn(f"hotpath/{r['driver']}: no '{HOTPATH_REF_VARIANT}' reference")
                continue
            diff, comb, within = diff_within_spread(r, ref)
            pct = 100 * diff / ref["iops_mean"] if ref["iops_mean"] else float("nan")
            word = "within spread" if within else "outside spread"
            v.append({"check": "vs_tags_off", "driver": r["driver"],
                      "variant": r["variant"], "diff": diff, "diff_pct": pct,
                      "combined_stdev": comb, "within_spread": within,
                      "text": (f"{r['driver']}/{r['variant']} vs {HOTPATH_REF_VARIANT}: "
                               f"{diff:+,.0f} IOPS ({pct:+.1f}%), combined stdev "
                               f"{comb:,.0f} → {word}")})
        out["hotpath"] = v
    if "slice_cost" in scen_rows:
        out["slice_cost"] = slice_cost_verdicts(rows, scen_rows["slice_cost"])
    if "slices" in scen_rows:
        out["slices"] = slice_verdicts(rows, scen_rows["slices"])
    if "slice_single" in scen_rows:
        out["slice_single"] = [
            pass_fail("single_job", r["ratio"] >= SLICE_LOSS_FLOOR,
                      f"{r['variant']} / ts0 = {fmt_ratio(r['ratio'], r['ratio_spread'])} "
                      f"(target ≥ {SLICE_LOSS_FLOOR})", variant=r["variant"], value=r["ratio"])
            for r in scen_rows["slice_single"]
            if r["ratio"] is not None and not r["variant"].endswith("-ts0")]
    return out


def diff_within_spread(r, ref):
    """(mean difference, combined stdev, whether the difference is within it)."""
    diff = r["iops_mean"] - ref["iops_mean"]
    comb = math.sqrt(r["iops_stdev"] ** 2 + ref["iops_stdev"] ** 2)
    return diff, comb, abs(diff) <= comb


def pass_fail(check, ok, text, **kw):
    """A verdict entry whose text ends in PASS or FAIL."""
    return {"check": check, "pass": ok,
            "text": f"{text} → **{'PASS' if ok else 'FAIL'}**", **kw}


def slice_cost_verdicts(rows, rs):
    """ts250 vs ts0 with the model off: within the rounds' spread?"""
    v = []
    for r in rs:
        if r["driver"] != "rnull" or r["variant"].endswith("-ts0") or r["ratio"] is None:
            continue
        qd = r["variant"].split("-")[0]
        ref = find_row(rows, "slice_cost", f"{qd}-ts0", "rnull")
        _, _, within = diff_within_spread(r, ref)
        nb = find_row(rows, "slice_cost", f"{qd}-null_blk", "null_blk")
        vs_c = ""
        if nb:
            rc, sc = ratio_spread(ref["iops_mean"], ref["iops_stdev"],
                                  nb["iops_mean"], nb["iops_stdev"])
            vs_c = f"; rnull ts0 / null_blk = {fmt_ratio(rc, sc)}"
        v.append({"check": "vs_ts0", "variant": r["variant"], "ratio": r["ratio"],
                  "spread": r["ratio_spread"], "within_spread": within,
                  "text": (f"{r['variant']} / {qd}-ts0 = {fmt_ratio(r['ratio'], r['ratio_spread'])}"
                           f" → {'within' if within else 'outside'} spread{vs_c}")})
    return v


def slice_verdicts(rows, rs):
    """The issue's targets on Herrmann's table (driver rnull)."""
    cells = {}  # (wl, ts, nj) -> row
    for r in rs:
        m = SLICE_RE.match(r["variant"])
        if m and r["driver"] == "rnull":
            cells[(m["wl"], int(m["ts"]), int(m["nj"]))] = r
    if not cells:
        return []
    v = []

    def check(name, ok, text, **kw):
        v.append(pass_fail(name, ok, text, **kw))

    max_nj = max(nj for _, _, nj in cells)
    slices = sorted({ts for _, ts, _ in cells if ts})
    for wl in ("seqread", "seqwrite"):
        r = cells.get((wl, SLICE_GAIN_TS, max_nj))
        if r and r["ratio"] is not None:
            check("gain", r["ratio"] >= SLICE_GAIN_TARGET,
                  f"{wl}, {max_nj} jobs: ts{SLICE_GAIN_TS} / ts0 = "
                  f"{fmt_ratio(r['ratio'], r['ratio_spread'])} (target ≥ {SLICE_GAIN_TARGET})",
                  workload=wl, value=r["ratio"])
        for ts in slices:
            r = cells.get((wl, ts, 1))
            if r and r["ratio"] is not None:
                check("single_job", r["ratio"] >= SLICE_LOSS_FLOOR,
                      f"{wl}, 1 job: ts{ts} / ts0 = {fmt_ratio(r['ratio'], r['ratio_spread'])}"
                      f" (target ≥ {SLICE_LOSS_FLOOR})", workload=wl, ts=ts, value=r["ratio"])
    for ts in slices:
        for nj in sorted({nj for w, t, nj in cells if w == "randread" and t == ts}):
            r = cells[("randread", ts, nj)]
            if r["ratio"] is not None:
                check("random", r["ratio"] >= SLICE_LOSS_FLOOR,
                      f"randread, {nj} jobs: ts{ts} / ts0 = "
                      f"{fmt_ratio(r['ratio'], r['ratio_spread'])} (target ≥ {SLICE_LOSS_FLOOR})",
                      ts=ts, jobs=nj, value=r["ratio"])
    one = cells.get(("seqread", 0, 1))
    many = [(cells[("seqread", ts, max_nj)], ts) for ts in slices if ("seqread", ts, max_nj) in cells]
    if one and many:
        best, ts = max(many, key=lambda x: x[0]["iops_mean"])
        frac, sp = ratio_spread(best["iops_mean"], best["iops_stdev"],
                                one["iops_mean"], one["iops_stdev"])
        check("cfq_level", frac is not None and frac >= SLICE_CFQ_TARGET,
              f"seqread, {max_nj} jobs at ts{ts} (the best slice) keep "
              f"{fmt_ratio(frac, sp)} of one job at ts0 (CFQ level: ≥ {SLICE_CFQ_TARGET})",
              ts=ts, value=frac)
    return v


def herrmann_tables(rs):
    """Markdown tables in Herrmann's layout: numjobs down, slices across,
    IOPS mean (stdev)."""
    cells = {}
    for r in rs:
        m = SLICE_RE.match(r["variant"])
        if m and r["driver"] == "rnull":
            cells[(m["wl"], int(m["ts"]), int(m["nj"]))] = r
    lines = []
    for wl in ordered({w for w, _, _ in cells}, SLICE_WORKLOADS):
        tss = sorted({ts for w, ts, _ in cells if w == wl})
        njs = sorted({nj for w, _, nj in cells if w == wl})
        lines += [f"**{wl}** (fio IOPS, mean (stdev) over {cells[(wl, tss[0], njs[0])]['n']} runs):", "",
                  "| jobs | " + " | ".join(f"time_slice_us={ts}" for ts in tss) + " |",
                  "|" + "|".join(["---"] * (1 + len(tss))) + "|"]
        for nj in njs:
            row = [str(nj)]
            for ts in tss:
                r = cells.get((wl, ts, nj))
                row.append("–" if r is None else
                           f"{r['iops_mean']:,.1f} ({r['iops_stdev']:,.1f})")
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return lines


# --------------------------------------------------------------------------
# formatting

def fmt_iops(v):
    if v is None:
        return "–"
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.2f}M"
    if a >= 1e3:
        return f"{v / 1e3:.1f}k"
    return f"{v:.0f}"


def fmt_us(ns):
    if ns is None:
        return "–"
    us = ns / 1000.0
    return f"{us:.1f}" if us < 100 else f"{us:,.0f}"


def fmt_ratio(r, sp):
    if r is None:
        return "–"
    return f"{r:.3f} ± {sp:.3f}" if sp is not None else f"{r:.3f}"


def fmt_wall(s):
    s = num(s)
    if s is None:
        return "–"
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return (f"{h}h {m:02d}m {sec:02d}s" if h else f"{m}m {sec:02d}s") + f" ({s} s)"


def md_escape(s: str) -> str:
    return str(s).replace("|", "\\|")


# --------------------------------------------------------------------------
# plots

def _plt():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except Exception as e:  # ImportError or backend problems
        warn(f"matplotlib unavailable ({e}); skipping plots")
        return None


def _color(drv, i=0):
    return DRIVER_COLORS.get(drv, EXTRA_COLORS[i % len(EXTRA_COLORS)])


def _save(plt, fig, outdir, name):
    path = os.path.join(outdir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return name


def _kfmt(ax, axis="y"):
    from matplotlib.ticker import FuncFormatter
    f = FuncFormatter(lambda v, _: fmt_iops(v) if v else "0")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(f)


def plot_grouped_bars(plt, rows, scen, outdir, title, group_key="variant",
                      series_key="driver", groups_order=(), series_order=DRIVER_ORDER,
                      ylabel="IOPS", annotate_ratio=True, fname=None, notes=None):
    """Bars per group (x) and series (colour); notes: {group: (text, colour)}
    drawn above the group."""
    rs = [r for r in rows if r["scenario"] == scen]
    if not rs:
        return None
    groups = ordered({r[group_key] for r in rs}, groups_order)
    series = ordered({r[series_key] for r in rs}, series_order)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(groups) * max(1, len(series)) / 2 + 2), 4.6))
    width = 0.8 / max(1, len(series))
    ymax = 0
    for si, s in enumerate(series):
        xs, ys, es, rr = [], [], [], []
        for gi, g in enumerate(groups):
            r = next((x for x in rs if x[group_key] == g and x[series_key] == s), None)
            if r is None:
                continue
            xs.append(gi - 0.4 + width * (si + 0.5))
            ys.append(r["iops_mean"])
            es.append(r["iops_stdev"])
            rr.append(r)
            ymax = max(ymax, r["iops_mean"] + r["iops_stdev"])
        color = _color(s, si) if series_key == "driver" else EXTRA_COLORS[si % len(EXTRA_COLORS)] if si > 1 else ("#1f77b4", "#ff7f0e")[si]
        bars = ax.bar(xs, ys, width * 0.95, yerr=es, capsize=4, label=s or "total",
                      color=color, edgecolor="black", linewidth=0.5)
        if annotate_ratio:
            for b, r in zip(bars, rr):
                if r["ratio"] is not None and r["ratio"] != 1.0:
                    ax.annotate(f"×{r['ratio']:.2f}", (b.get_x() + b.get_width() / 2,
                                b.get_height() + (r["iops_stdev"] or 0)),
                                ha="center", va="bottom", fontsize=8,
                                xytext=(0, 2), textcoords="offset points")
    for gi, g in enumerate(groups):
        if notes and g in notes:
            text, color = notes[g]
            ax.text(gi, ymax * 1.1, text, ha="center", va="bottom", fontsize=9,
                    color=color, fontweight="bold")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, ymax * 1.3 if ymax else 1)
    _kfmt(ax)
    ax.set_title(title, fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    has_r = annotate_ratio and any(r["ratio"] not in (None, 1.0) for r in rs)
    ref = next((r["ref"] for r in rs if r["ref"]), REF_DRIVER)
    ax.legend(fontsize=9, loc="upper left", ncol=max(1, len(series)),
              title=f"×N = ratio to {ref}" if has_r else None, title_fontsize=8)
    return _save(plt, fig, outdir, fname or f"{scen}.png")


def _depth_series(rows, scen):
    """driver -> sorted [(depth, row)] for variants with a number in them."""
    out = {}
    for r in rows:
        if r["scenario"] != scen or r["job"] != "":
            continue
        d = variant_number(r["variant"])
        if d is None:
            warn(f"{scen}: variant {r['variant']!r} has no depth number; not plotted")
            continue
        out.setdefault(r["driver"], []).append((d, r))
    for v in out.values():
        v.sort(key=lambda x: x[0])
    return {k: out[k] for k in ordered(out, DRIVER_ORDER)}


def _log2_axis(ax, depths):
    from matplotlib.ticker import FixedLocator, NullLocator
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(sorted(set(depths))))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(d) for d in sorted(set(depths))])


def _log_us_axis(ax):
    """Log y axis with plain-number labels at 1-2-5 steps."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def plot_qd_sweep(plt, rows, outdir, title):
    series = _depth_series(rows, "qd_sweep")
    if not series:
        return []
    names = []
    depths = [d for v in series.values() for d, _ in v]
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for i, (drv, pts) in enumerate(series.items()):
        ax.errorbar([d for d, _ in pts], [r["iops_mean"] for _, r in pts],
                    yerr=[r["iops_stdev"] for _, r in pts], marker="o", capsize=4,
                    label=drv, color=_color(drv, i))
    _log2_axis(ax, depths)
    ax.set_xlabel("iodepth")
    ax.set_ylabel("IOPS")
    ax.set_ylim(bottom=0)
    _kfmt(ax)
    ax.set_title(title, fontsize=11)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9)
    names.append(_save(plt, fig, outdir, "qd_sweep_iops.png"))

    have_lat = any(r["p50_ns"] is not None for v in series.values() for _, r in v)
    if have_lat:
        fig, axes = plt.subplots(1, 3, figsize=(13, 4.4), sharex=True)
        for ax, p in zip(axes, PCT_KEYS):
            for i, (drv, pts) in enumerate(series.items()):
                pp = [(d, r) for d, r in pts if r[f"{p}_ns"] is not None]
                if not pp:
                    continue
                ax.errorbar([d for d, _ in pp], [r[f"{p}_ns"] / 1000 for _, r in pp],
                            yerr=[(r[f"{p}_ns_stdev"] or 0) / 1000 for _, r in pp],
                            marker="o", capsize=3, label=drv, color=_color(drv, i))
            _log2_axis(ax, depths)
            _log_us_axis(ax)
            ax.set_xlabel("iodepth")
            ax.set_ylabel(f"{PCT_LABEL[p]} completion latency (µs)")
            ax.set_title(f"{PCT_LABEL[p]} clat", fontsize=11)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(f"{title} — completion latency", fontsize=11)
        names.append(_save(plt, fig, outdir, "qd_sweep_latency.png"))
    return names


def plot_starvation(plt, rows, outdir, title):
    series = _depth_series(rows, "starvation")
    if not series:
        return None
    depths = [d for v in series.values() for d, _ in v]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for i, (drv, pts) in enumerate(series.items()):
        c = _color(drv, i)
        a1.errorbar([d for d, _ in pts], [r["iops_mean"] for _, r in pts],
                    yerr=[r["iops_stdev"] for _, r in pts], marker="o", capsize=4,
                    label=drv, color=c)
        pp = [(d, r) for d, r in pts if r["ctx_per_io"] is not None]
        if pp:
            a2.errorbar([d for d, _ in pp], [r["ctx_per_io"] for _, r in pp],
                        yerr=[r["ctx_per_io_stdev"] or 0 for _, r in pp], marker="s",
                        capsize=4, label=drv, color=c)
    for ax in (a1, a2):
        _log2_axis(ax, depths)
        ax.set_xlabel("hw_queue_depth")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=9)
        ax.set_ylim(bottom=0)
    a1.set_ylabel("IOPS")
    _kfmt(a1)
    a1.set_title("IOPS", fontsize=11)
    a2.set_ylabel("context switches per I/O")
    a2.set_title("ctx / IO", fontsize=11)
    fig.suptitle(title, fontsize=11)
    return _save(plt, fig, outdir, "starvation.png")


def plot_fairness(plt, rows, outdir, title, meta):
    rs = [r for r in rows if r["scenario"] == "fairness"]
    if not rs:
        return None
    drv = ordered({r["driver"] for r in rs}, DRIVER_ORDER)[0]
    if len({r["driver"] for r in rs}) > 1:
        warn(f"fairness: several drivers; plotting {drv} only")
    rs = [r for r in rs if r["driver"] == drv]
    pols = ordered({r["variant"] for r in rs}, POLICY_ORDER)
    jobs = ordered({r["job"] for r in rs}, ["A", "B"])
    comp_us = num(dig(meta, "scenarios", "fairness", "completion_us"))
    limit_us = FAIRNESS_LAT_FACTOR * comp_us if comp_us is not None else None
    b_rows = [find_row(rs, "fairness", p, drv, "B") for p in pols]
    have_blat = any(r and r["lat_mean_ns"] is not None for r in b_rows)
    ncols = 2 if have_blat else 1
    fig, axes = plt.subplots(1, ncols, figsize=(max(6.5, 1.8 * len(pols) + 2) + 4.5 * (ncols - 1), 4.8),
                             squeeze=False, gridspec_kw={"width_ratios": [1.6, 1][:ncols]})
    ax = axes[0][0]
    width = 0.8 / max(1, len(jobs))
    ymax = max(r["iops_mean"] + r["iops_stdev"] for r in rs) or 1
    job_colors = {}
    for ji, job in enumerate(jobs):
        xs, ys, es, rr = [], [], [], []
        for pi, p in enumerate(pols):
            r = find_row(rs, "fairness", p, drv, job)
            if r:
                xs.append(pi - 0.4 + width * (ji + 0.5))
                ys.append(r["iops_mean"])
                es.append(r["iops_stdev"])
                rr.append(r)
        lab = {"A": "A (busy disk)", "B": "B (light disk)"}.get(job, job)
        color = ("#4c72b0", "#dd8452")[ji] if ji < 2 else EXTRA_COLORS[ji % len(EXTRA_COLORS)]
        job_colors[job] = color
        bars = ax.bar(xs, ys, width * 0.95, yerr=es, capsize=4, label=lab,
                      color=color, edgecolor="black", linewidth=0.5)
        if job == "B":
            for b, r in zip(bars, rr):
                txt = f"B {fmt_iops(r['iops_mean'])} IOPS"
                if r["lat_mean_ns"] is not None:
                    txt += f"\nlat {fmt_us(r['lat_mean_ns'])} µs"
                bad = (limit_us is not None and r["lat_mean_ns"] is not None
                       and r["lat_mean_ns"] > limit_us * 1000)
                ax.annotate(txt, (b.get_x() + b.get_width() / 2, b.get_height() + r["iops_stdev"]),
                            xytext=(0, 3), textcoords="offset points", ha="center",
                            va="bottom", fontsize=8, color="#b00000" if bad else "black")
    a_b = find_row(rs, "fairness", "borrow", drv, "A")
    a_f = find_row(rs, "fairness", "fair", drv, "A")
    if a_b and a_f:
        r, sp = ratio_spread(a_b["iops_mean"], a_b["iops_stdev"], a_f["iops_mean"], a_f["iops_stdev"])
        if r is not None:
            ax.text(0.02, 0.97, f"A borrow/fair = {fmt_ratio(r, sp)} (target ≥ {FAIRNESS_TARGET_RATIO})",
                    transform=ax.transAxes, va="top", fontsize=9,
                    bbox=dict(boxstyle="round", fc="white", alpha=0.8))
    ax.set_xticks(range(len(pols)))
    ax.set_xticklabels(pols)
    ax.set_xlabel("tag policy")
    ax.set_ylabel("IOPS")
    ax.set_ylim(0, ymax * 1.25)
    _kfmt(ax)
    ax.set_title(f"IOPS per job [{drv}]", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=9, loc="upper right")
    if have_blat:
        ax2 = axes[0][1]
        xs = [i for i, r in enumerate(b_rows) if r and r["lat_mean_ns"] is not None]
        ys = [b_rows[i]["lat_mean_ns"] / 1000 for i in xs]
        es = [(b_rows[i]["lat_mean_ns_stdev"] or 0) / 1000 for i in xs]
        cols = [("#b00000" if limit_us is not None and y > limit_us else job_colors.get("B", "#dd8452"))
                for y in ys]
        ax2.bar(xs, ys, 0.6, yerr=es, capsize=4, color=cols, edgecolor="black", linewidth=0.5)
        if limit_us is not None:
            ax2.axhline(limit_us, color="black", ls="--", lw=1,
                        label=f"limit {FAIRNESS_LAT_FACTOR:g} × {comp_us:g} µs")
            ax2.legend(fontsize=8, loc="upper right")
        ax2.set_xticks(range(len(pols)))
        ax2.set_xticklabels(pols)
        ax2.set_xlabel("tag policy")
        ax2.set_ylabel("B mean total latency (µs)")
        top = max(ys + ([limit_us] if limit_us else []))
        ax2.set_ylim(0, top * 1.2)
        ax2.set_title("light disk B: mean latency", fontsize=10)
        ax2.grid(axis="y", alpha=0.3)
    fig.suptitle(title, fontsize=11)
    return _save(plt, fig, outdir, "fairness.png")


def plot_hotpath(plt, rows, outdir, title):
    """Mean ± sd per variant as points on a zoomed axis (bars from 0 would
    hide differences of a few percent), with the tags-off band."""
    rs = [r for r in rows if r["scenario"] == "hotpath"]
    if not rs:
        return None
    drivers = ordered({r["driver"] for r in rs}, DRIVER_ORDER)
    variants = ordered({r["variant"] for r in rs}, VARIANT_ORDER["hotpath"])
    fig, ax = plt.subplots(figsize=(max(6.5, 1.3 * len(variants) + 2.5), 4.6))
    off = 0.12
    lo_all, hi_all = [], []
    for di, drv in enumerate(drivers):
        c = _color(drv, di)
        ref = find_row(rows, "hotpath", HOTPATH_REF_VARIANT, drv)
        if ref:
            lo, hi = ref["iops_mean"] - ref["iops_stdev"], ref["iops_mean"] + ref["iops_stdev"]
            ax.axhspan(lo, hi, color=c, alpha=0.12)
            ax.axhline(ref["iops_mean"], color=c, ls="--", lw=1,
                       label=f"{drv} {HOTPATH_REF_VARIANT} mean ± sd")
        pts = [(vi, find_row(rows, "hotpath", var, drv)) for vi, var in enumerate(variants)]
        pts = [(vi, r) for vi, r in pts if r]
        xs = [vi + (di - (len(drivers) - 1) / 2) * off for vi, _ in pts]
        ax.errorbar(xs, [r["iops_mean"] for _, r in pts], yerr=[r["iops_stdev"] for _, r in pts],
                    fmt="o", ms=7, capsize=5, color=c, label=drv)
        for x, (_, r) in zip(xs, pts):
            lo_all.append(r["iops_mean"] - r["iops_stdev"])
            hi_all.append(r["iops_mean"] + r["iops_stdev"])
            if r["ratio"] is not None and r["variant"] != HOTPATH_REF_VARIANT:
                ax.annotate(f"×{r['ratio']:.3f}±{r['ratio_spread']:.3f}",
                            (x, r["iops_mean"] + r["iops_stdev"]), xytext=(0, 4),
                            textcoords="offset points", ha="center", va="bottom", fontsize=8)
    lo, hi = min(lo_all), max(hi_all)
    pad = max((hi - lo) * 0.25, hi * 0.005)
    ax.set_ylim(lo - pad, hi + pad * 1.6)
    ax.set_xlim(-0.6, len(variants) - 0.4)
    ax.set_xticks(range(len(variants)))
    ax.set_xticklabels(variants)
    ax.set_xlabel("tag policy")
    ax.set_ylabel("IOPS (zoomed axis)")
    _kfmt(ax)
    ax.set_title(title, fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    return _save(plt, fig, outdir, "hotpath.png")


def plot_slices(plt, rows, outdir, title):
    rs = [r for r in rows if r["scenario"] == "slices"]
    parsed = {}  # (driver, workload) -> ts -> [(nj, row)]
    for r in rs:
        m = SLICE_RE.match(r["variant"])
        if not m:
            warn(f"slices: variant {r['variant']!r} not <workload>-ts<us>-j<n>; not plotted")
            continue
        (parsed.setdefault((r["driver"], m["wl"]), {})
         .setdefault(int(m["ts"]), []).append((int(m["nj"]), r)))
    if not parsed:
        return None
    keys = sorted(parsed, key=lambda k: (DRIVER_ORDER.index(k[0]) if k[0] in DRIVER_ORDER else 9,
                                         SLICE_WORKLOADS.index(k[1])
                                         if k[1] in SLICE_WORKLOADS else 9, k[1]))
    fig, axes = plt.subplots(1, len(keys), figsize=(4.6 * len(keys) + 0.5, 4.4), squeeze=False)
    all_ts = sorted({ts for v in parsed.values() for ts in v})
    cmap = plt.get_cmap("viridis")
    for ax, key in zip(axes[0], keys):
        for ts, pts in sorted(parsed[key].items()):
            pts.sort(key=lambda x: x[0])
            ci = all_ts.index(ts) / max(1, len(all_ts) - 1)
            ax.errorbar([n for n, _ in pts], [r["iops_mean"] for _, r in pts],
                        yerr=[r["iops_stdev"] for _, r in pts], marker="o", capsize=3,
                        label=f"time_slice {ts} µs", color=cmap(ci * 0.9))
        njs = sorted({n for v in parsed[key].values() for n, _ in v})
        ax.set_xticks(njs)
        ax.set_xlabel("numjobs")
        ax.set_ylabel("IOPS")
        ax.set_ylim(bottom=0)
        _kfmt(ax)
        drv, wl = key
        ax.set_title(wl if len({k[0] for k in keys}) == 1 else f"{wl} [{drv}]", fontsize=11)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    return _save(plt, fig, outdir, "slices.png")


def plot_policy_switch(plt, tls, outdir, title):
    """One panel per (timeline, job), stacked with a shared time axis, so a
    light job is not flattened by a busy one."""
    panels = [(tl, job) for tl in tls for job in tl.series]
    if not panels:
        return None
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 1.2 + 2.6 * len(panels)),
                             squeeze=False, sharex=True)
    for pi, (ax, (tl, job)) in enumerate(zip(axes[:, 0], panels)):
        ts, vs = tl.series[job]
        ji = list(tl.series).index(job)
        ax.plot([t / 1000 for t in ts], vs, lw=1.4, marker=".", ms=3,
                color=("#4c72b0", "#dd8452")[ji] if ji < 2 else EXTRA_COLORS[ji % len(EXTRA_COLORS)])
        ymax = max(vs) or 1
        ax.set_ylim(0, ymax * 1.25)
        for t, pol in tl.switches:
            ax.axvline(t / 1000, color="black", ls="--", lw=1, alpha=0.7)
            if pi == 0 or panels[pi - 1][0] is not tl:
                ax.text(t / 1000, ymax * 1.22, f" {pol}", va="top", ha="left", fontsize=9,
                        bbox=dict(boxstyle="round,pad=0.2", fc="white", alpha=0.85))
        lab = {"A": "A (busy)", "B": "B (light)"}.get(job, job)
        ax.set_ylabel(f"{lab}\nIOPS")
        _kfmt(ax)
        ax.grid(alpha=0.3)
        if len(tls) > 1:
            ax.set_title(f"{tl.driver}/{tl.variant}: job {job}", fontsize=9, loc="left")
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(title, fontsize=11)
    return _save(plt, fig, outdir, "policy_switch.png")


def make_plots(rows, tls, meta, outdir, verd=None) -> dict[str, list[str]]:
    verd = verd or {}
    plt = _plt()
    if plt is None:
        return {}
    out: dict[str, list[str]] = {}
    scens = {r["scenario"] for r in rows}

    def add(scen, fn):
        try:
            res = fn()
        except Exception as e:  # never let one plot kill the report
            warn(f"{scen}: plot failed: {type(e).__name__}: {e}")
            plt.close("all")
            return
        if isinstance(res, str):
            res = [res]
        if res:
            out.setdefault(scen, []).extend(res)

    for scen in ordered(scens, SCENARIO_ORDER):
        t = scenario_title(meta, scen)
        if scen == "qd_sweep":
            add(scen, lambda: plot_qd_sweep(plt, rows, outdir, t))
        elif scen == "starvation":
            add(scen, lambda: plot_starvation(plt, rows, outdir, t))
        elif scen == "fairness":
            add(scen, lambda: plot_fairness(plt, rows, outdir, t, meta))
        elif scen == "block035":
            notes = {v["policy"]: ("fast ≥ slow ✓", "#2a7d2a") if v["pass"] else
                     ("fast < slow ✗", "#b00000")
                     for v in verd.get("block035", []) if v["driver"] == "rnull"}
            add(scen, lambda: plot_grouped_bars(
                plt, rows, scen, outdir, t, series_key="job", groups_order=POLICY_ORDER,
                series_order=["fast", "slow"], annotate_ratio=False, notes=notes))
        elif scen == "hotpath":
            add(scen, lambda: plot_hotpath(plt, rows, outdir, t))
        elif scen == "slices":
            add(scen, lambda: plot_slices(plt, rows, outdir, t))
        elif scen in PER_JOB_SCENARIOS:
            pass
        else:  # peak, shared_tags, memory and unknown scenarios
            add(scen, lambda: plot_grouped_bars(
                plt, rows, scen, outdir, t, groups_order=VARIANT_ORDER.get(scen, ())))
    if tls:
        add("policy_switch", lambda: plot_policy_switch(
            plt, tls, outdir, scenario_title(meta, "policy_switch")))
    return out


# --------------------------------------------------------------------------
# outputs

def scenario_title(meta, scen):
    t = dig(meta, "scenarios", scen, "title")
    return str(t) if t else scen


def write_csv(rows, path):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else
                            (f"{r[k]:.6g}" if isinstance(r[k], float) and k in (
                                "ratio", "ratio_spread", "ctx_per_io") else
                             (round(r[k], 3) if isinstance(r[k], float) else r[k])))
                        for k in CSV_FIELDS})


def write_json(rows, verd, tls, meta, plots, path):
    obj = {
        "meta": meta,
        "rows": rows,
        "verdicts": verd,
        "policy_switch": [{"driver": t.driver, "variant": t.variant,
                           "switches": [{"t_ms": a, "policy": b} for a, b in t.switches],
                           "segments": t.segments} for t in tls],
        "plots": plots,
        "warnings": WARNINGS,
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


def scenario_table(rs, scen):
    has_job = any(r["job"] for r in rs)
    has_ratio = any(r["ratio"] is not None for r in rs)
    has_pct = any(r["p50_ns"] is not None for r in rs)
    has_lat = scen in PER_JOB_SCENARIOS and any(r["lat_mean_ns"] is not None for r in rs)
    has_ctx = any(r["ctx_per_io"] is not None for r in rs) and scen == "starvation"
    ref = next((r["ref"] for r in rs if r["ref"]), REF_DRIVER)
    head = ["Variant", "Driver"] + (["Job"] if has_job else []) + ["n", "IOPS (mean ± sd)", "min – max"]
    if has_ratio:
        head.append(RATIO_HEAD.get(scen, f"ratio vs {ref}"))
    if has_pct:
        head += ["p50 µs", "p99 µs", "p99.9 µs"]
    if has_lat:
        head.append("mean lat µs")
    if has_ctx:
        head.append("ctx/IO")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
    for r in rs:
        c = [md_escape(r["variant"]), md_escape(r["driver"])]
        if has_job:
            c.append(md_escape(r["job"]))
        c += [str(r["n"]), f"{fmt_iops(r['iops_mean'])} ± {fmt_iops(r['iops_stdev'])}",
              f"{fmt_iops(r['iops_min'])} – {fmt_iops(r['iops_max'])}"]
        if has_ratio:
            c.append(fmt_ratio(r["ratio"], r["ratio_spread"]))
        if has_pct:
            c += [fmt_us(r[f"{p}_ns"]) for p in PCT_KEYS]
        if has_lat:
            c.append(fmt_us(r["lat_mean_ns"]))
        if has_ctx:
            c.append("–" if r["ctx_per_io"] is None else f"{r['ctx_per_io']:.3f}")
        lines.append("| " + " | ".join(c) + " |")
    return lines


def write_md(rows, verd, tls, meta, plots, path):
    L = ["# rnull benchmark report", ""]
    cpus, mem = meta.get("guest_cpus", "?"), meta.get("guest_mem", "?")
    L += [
        f"- **Date:** {meta.get('date', '–')}",
        f"- **Kernel:** {meta.get('kernel', '–')}",
        f"- **Guest:** {cpus} vCPU, {mem} RAM",
        f"- **Rounds:** {meta.get('rounds', '–')} per (scenario, variant, driver)",
        f"- **Command:** `{meta.get('command', '–')}`",
        f"- **Wall time:** {fmt_wall(meta.get('wall_seconds'))}",
        "",
        "IOPS are mean ± sample stdev over rounds. Ratios are mean / reference mean "
        f"(reference: `{REF_DRIVER}` in the same scenario and variant; for `hotpath`, "
        f"variant `{HOTPATH_REF_VARIANT}` of the same driver) with spread "
        "ratio·√((sa/ma)²+(sb/mb)²). Latencies are completion-latency percentiles "
        "(clat) averaged over rounds.",
        "",
    ]
    allv = [(scen, v) for scen in ordered(verd, SCENARIO_ORDER) for v in verd[scen]
            if "pass" in v]
    if allv:
        n_ok = sum(1 for _, v in allv if v["pass"])
        L += [f"**Verdict summary:** {n_ok}/{len(allv)} checks pass.", ""]
        L += [f"- `{scen}` {v['text']}" for scen, v in allv if not v["pass"]]
        L += [""]
    by_scen = {}
    for r in rows:
        by_scen.setdefault(r["scenario"], []).append(r)
    scens = ordered(set(by_scen) | ({"policy_switch"} if tls else set()), SCENARIO_ORDER)
    if not scens:
        L += ["_No results found._", ""]
    for scen in scens:
        L += [f"## {md_escape(scenario_title(meta, scen))} (`{scen}`)", ""]
        notes = dig(meta, "scenarios", scen, "notes")
        if notes:
            L += [str(notes) if not isinstance(notes, list) else
                  "\n".join(f"- {n}" for n in notes), ""]
        for p in plots.get(scen, []):
            L += [f"![{scen}]({p})", ""]
        if scen == "slices" and scen in by_scen:
            L += herrmann_tables(by_scen[scen])
        if scen in by_scen:
            L += scenario_table(by_scen[scen], scen) + [""]
        if scen == "policy_switch":
            for tl in tls:
                if not tl.segments:
                    continue
                jobs = list(tl.series)
                L += [f"Mean IOPS per policy segment ({tl.driver}, {tl.variant}):", "",
                      "| Policy | from s | to s | " + " | ".join(f"{j} IOPS" for j in jobs) + " |",
                      "|" + "|".join(["---"] * (3 + len(jobs))) + "|"]
                for s in tl.segments:
                    L.append(f"| {md_escape(s['policy'])} | {s['start_ms'] / 1000:.1f} | "
                             f"{s['end_ms'] / 1000:.1f} | " +
                             " | ".join(fmt_iops(s["jobs"][j]) for j in jobs) + " |")
                L.append("")
        if verd.get(scen):
            L += ["**Verdicts:**", ""] + [f"- {v['text']}" for v in verd[scen]] + [""]
    if WARNINGS:
        L += ["## Warnings", ""] + [f"- {md_escape(w)}" for w in WARNINGS] + [""]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(L))


def generate(results: str, outdir: str, plots: bool = True) -> dict:
    """Build all outputs; returns {'rows', 'verdicts', 'timelines', 'plots', 'warnings'}."""
    WARNINGS.clear()
    os.makedirs(outdir, exist_ok=True)
    meta = {}
    mpath = os.path.join(results, "meta.json")
    if os.path.exists(mpath):
        meta = load_json(mpath) or {}
    else:
        warn(f"{mpath}: missing")
    data = collect(results)
    rows = summarize(data)
    tls = collect_timelines(results)
    verd = verdicts(rows, meta)
    pl = make_plots(rows, tls, meta, outdir, verd) if plots else {}
    write_csv(rows, os.path.join(outdir, "summary.csv"))
    write_json(rows, verd, tls, meta, pl, os.path.join(outdir, "summary.json"))
    write_md(rows, verd, tls, meta, pl, os.path.join(outdir, "report.md"))
    return {"rows": rows, "verdicts": verd, "timelines": tls, "plots": pl,
            "warnings": list(WARNINGS)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description="Summarize rnull fio benchmark results (RESULTS tree of fio "
                    "JSON files) into summary.csv, summary.json, report.md and PNG plots.",
        epilog="Layout: RESULTS/meta.json, RESULTS/<scenario>/<variant>/<driver>/r<N>.json, "
               "RESULTS/policy_switch/timeline/<driver>/<job>_iops.<k>.log + switches.txt. "
               "Warnings go to stderr; exit status is 0 unless RESULTS is not a directory.")
    ap.add_argument("results", metavar="RESULTS", help="benchmark results directory")
    ap.add_argument("outdir", metavar="OUTDIR", help="output directory (created if needed)")
    ap.add_argument("--no-plots", action="store_true", help="skip PNG generation")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.results):
        print(f"report: error: {a.results}: not a directory", file=sys.stderr)
        return 2
    res = generate(a.results, a.outdir, plots=not a.no_plots)
    n_png = sum(len(v) for v in res["plots"].values())
    print(f"report: {len(res['rows'])} rows, {n_png} plots, {len(res['warnings'])} warnings "
          f"-> {a.outdir}/report.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
