"""One statistics row per (cpus, scenario, variant, driver, job), with the
ratio to its reference row."""

from __future__ import annotations

import statistics

from common import cpus_key, ordered
from names import (DRIVER_ORDER, HOTPATH_REF_VARIANT, JOB_ORDER, REF_DRIVER, SCENARIO_ORDER,
                   SLICE_RE, variant_order)
from parse import PCT_KEYS, Results
from stats import mean_or_none, ratio_stats, stdev0

# ratio_stats() keys -> row keys
RATIO_FIELDS = {"ratio": "ratio", "spread": "ratio_spread", "ci_lo": "ratio_ci_lo",
                "ci_hi": "ratio_ci_hi", "df": "ratio_df", "p": "ratio_p",
                "rmin": "ratio_rmin", "rmax": "ratio_rmax", "res": "ratio_res"}


def reference_candidates(scen: str, var: str, drv: str, ref_var=None):
    """[(variant, driver, label)] of the rows `var`/`drv` may be compared
    with, the first that exists wins. ref_var is the variant's `ref` file."""
    if scen == "hotpath":
        return [(HOTPATH_REF_VARIANT, drv, f"{drv}/{HOTPATH_REF_VARIANT}")]
    if scen == "slice_cost":
        ref = var.split("-")[0] + "-ts0"
        return [(ref, "rnull", f"rnull/{ref}")]
    if scen == "slice_single":
        ref = var.rsplit("-", 1)[0] + "-ts0"
        return [(ref, drv, f"{drv}/{ref}")]
    if scen == "slice_clock":
        ref = "ts0-" + var.rsplit("-", 1)[-1]
        return [(ref, drv, f"{drv}/{ref}")]
    m = SLICE_RE.match(var) if scen == "slices" else None
    if m:
        ref = f"{m['wl']}-ts0-j{m['nj']}"
        return [(ref, drv, f"{drv}/{ref}")]
    out = [(var, REF_DRIVER, REF_DRIVER)]
    if ref_var and ref_var != var:
        out.append((ref_var, REF_DRIVER, f"{REF_DRIVER}/{ref_var}"))
    return out


def _scen_key(k):
    cpus, scen = k
    pos = SCENARIO_ORDER.index(scen) if scen in SCENARIO_ORDER else len(SCENARIO_ORDER)
    return (pos, scen if pos == len(SCENARIO_ORDER) else "", cpus_key(cpus))


def _stats_row(key, ss, res: Results) -> dict:
    cpus, scen, var, drv, job = key
    ss = sorted(ss, key=lambda s: (s.round is None, s.round or 0))
    iops = [s.iops for s in ss]
    row = {
        "cpus": cpus, "scenario": scen, "variant": var, "driver": drv,
        "job": job, "n": len(ss),
        "iops_mean": statistics.fmean(iops),
        "iops_stdev": stdev0(iops),
        "iops_min": min(iops), "iops_max": max(iops),
        "ref": None, **{f: None for f in RATIO_FIELDS.values()},
    }
    for attr in PCT_KEYS:
        vals = [getattr(s, attr) for s in ss]
        row[f"{attr}_ns"] = mean_or_none(vals)
        row[f"{attr}_ns_stdev"] = stdev0(vals) if any(v is not None for v in vals) else None
    row["lat_mean_ns"] = mean_or_none([s.lat_mean for s in ss])
    row["lat_mean_ns_stdev"] = stdev0([s.lat_mean for s in ss])
    row["bw_mean"] = mean_or_none([s.bw for s in ss])
    # A count per run: the total over the rounds that have one.
    hs = [s.handoffs for s in ss if s.handoffs is not None]
    row["slow_handoffs"] = sum(hs) if hs else None
    row["slow_handoffs_max"] = max(hs) if hs else None
    hr = [s.handoffs_run for s in ss if s.handoffs_run is not None]
    row["slow_handoffs_run"] = sum(hr) if hr else None
    cpi = [s.ctx / s.total_ios for s in ss if s.ctx is not None and s.total_ios]
    row["ctx_per_io"] = statistics.fmean(cpi) if cpi else None
    row["ctx_per_io_stdev"] = stdev0(cpi) if cpi else None
    # The mean of the rounds' figures moves by the mean of their steps.
    steps = [s.step for s in ss]
    row["iops_step"] = None if None in steps else statistics.fmean(steps)
    row["iops_rounds"] = iops
    row["rounds"] = [s.round for s in ss]
    row["variant_ref"] = res.refs.get((cpus, scen, var))
    row["params"] = res.params.get((cpus, scen, var), {}).get(drv)
    return row


def rel_step(row):
    """The relative resolution of a row's mean IOPS (and bandwidth, which fio
    computes over the same runtime): iops_step / iops_mean; None if unknown."""
    step, mean = (row or {}).get("iops_step"), (row or {}).get("iops_mean")
    return None if step is None or not mean else step / mean


def ratio_res(ratio, *rows):
    """The resolution of `ratio`, a ratio (or product) of the rows' means:
    ratio times the sum of their relative steps; None if any is unknown."""
    rels = [rel_step(r) for r in rows]
    return None if ratio is None or None in rels else abs(ratio) * sum(rels)


def row_ratio(a: dict, b: dict) -> dict:
    """ratio_stats of row a's rounds over row b's, with its resolution."""
    st = ratio_stats(a["iops_rounds"], b["iops_rounds"], a["rounds"], b["rounds"])
    st["res"] = ratio_res(st["ratio"], a, b)
    return st


def row_cmp(row: dict) -> dict:
    """The ratio_stats dict stored in a row's ratio_* fields."""
    return {k: row.get(f) for k, f in RATIO_FIELDS.items()}


def summarize(res: Results) -> list[dict]:
    """One stats row per (cpus, scenario, variant, driver, job)."""
    rows = []
    for cpus, scen in sorted(res.data, key=_scen_key):
        sd = res.data[(cpus, scen)]
        for var in variant_order(scen, sd):
            for drv in ordered(sd[var], DRIVER_ORDER):
                for job in ordered(sd[var][drv], JOB_ORDER.get(scen, ())):
                    rows.append(_stats_row((cpus, scen, var, drv, job), sd[var][drv][job], res))
    return link_references(rows)


def link_references(rows: list[dict]) -> list[dict]:
    """Each row's ref and ratio_* fields: its ratio to the first of its
    reference_candidates that exists. Works on rows read back from a
    summary.json too (they keep iops_rounds, rounds and variant_ref)."""
    index = {row_key(r): r for r in rows}
    for row in rows:
        key = row_key(row)
        row.update(ref=None, **{f: None for f in RATIO_FIELDS.values()})
        for rvar, rdrv, rname in reference_candidates(*key[1:4], row["variant_ref"]):
            rkey = (key[0], key[1], rvar, rdrv, key[4])
            if rkey == key:
                row.update(ref=rname, ratio=1.0, ratio_spread=0.0, ratio_rmin=1.0, ratio_rmax=1.0)
                break
            ref = index.get(rkey)
            if ref is not None:
                row["ref"] = rname
                row.update({RATIO_FIELDS[k]: v for k, v in row_ratio(row, ref).items()})
                break
    return rows


def row_key(r):
    return (r["cpus"], r["scenario"], r["variant"], r["driver"], r["job"])


def find_row(rows, scen, var, drv, job=""):
    for r in rows:
        if (r["scenario"], r["variant"], r["driver"], r["job"]) == (scen, var, drv, job):
            return r
    return None


def by_cpus(rows) -> dict:
    """{cpus: [rows]} in vCPU order."""
    out: dict = {}
    for r in rows:
        out.setdefault(r["cpus"], []).append(r)
    return {c: out[c] for c in sorted(out, key=cpus_key)}


def by_scenario(rows) -> dict:
    out: dict = {}
    for r in rows:
        out.setdefault(r["scenario"], []).append(r)
    return out


def slice_cells(rs) -> dict:
    """(workload, time_slice_us, numjobs) -> rnull row of scenario slices."""
    cells = {}
    for r in rs:
        m = SLICE_RE.match(r["variant"])
        if m and r["driver"] == "rnull":
            cells[(m["wl"], int(m["ts"]), int(m["nj"]))] = r
    return cells
