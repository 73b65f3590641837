"""Scenario `bind_tags`: shared tags that bind. One cell per (boot,
variant, driver): the total IOPS of the four devices (the sum of their
per-device rows, round by round), each device's share of it, and the
total against C null_blk on blk-mq's shared tag set (`shared`)."""

from __future__ import annotations

import statistics

from names import BIND_DEVICES, BIND_REF_VARIANT, DRIVER_ORDER, REF_DRIVER, variant_order
from rows import by_cpus, rel_step
from stats import ratio_stats
from common import ordered

SCEN = "bind_tags"


def _total(jobs: dict) -> dict | None:
    """The devices' rows summed round by round; None unless every device
    has a row with the same rounds."""
    rs = [jobs.get(d) for d in BIND_DEVICES]
    if None in rs or len({tuple(r["rounds"]) for r in rs}) != 1:
        return None
    rounds = [sum(vals) for vals in zip(*(r["iops_rounds"] for r in rs))]
    steps = [r.get("iops_step") for r in rs]
    return {"iops_rounds": rounds, "rounds": rs[0]["rounds"],
            "iops_mean": statistics.fmean(rounds),
            "iops_step": None if None in steps else sum(steps),
            "shares": {d: jobs[d]["iops_mean"] / statistics.fmean(rounds)
                       if rounds and statistics.fmean(rounds) else None
                       for d in BIND_DEVICES}}


def bind_cells(rows) -> list[dict]:
    """The cells, in the report's variant and driver order."""
    rows = [r for r in rows if r["scenario"] == SCEN and r["job"]]
    cells = []
    for cpus, rs in by_cpus(rows).items():
        groups: dict = {}
        for r in rs:
            groups.setdefault((r["variant"], r["driver"]), {})[r["job"]] = r
        totals = {k: _total(v) for k, v in groups.items()}
        ref = totals.get((BIND_REF_VARIANT, REF_DRIVER))
        for var in variant_order(SCEN, {v for v, _ in groups}):
            for drv in ordered({d for v, d in groups if v == var}, DRIVER_ORDER):
                tot = totals[(var, drv)]
                cell = {"cpus": cpus, "variant": var, "driver": drv, "total": tot,
                        "vs_ref": None}
                if tot and ref and tot is not ref:
                    st = ratio_stats(tot["iops_rounds"], ref["iops_rounds"],
                                     tot["rounds"], ref["rounds"])
                    rels = [rel_step(tot), rel_step(ref)]
                    st["res"] = (None if st["ratio"] is None or None in rels
                                 else st["ratio"] * sum(rels))
                    cell["vs_ref"] = st
                cells.append(cell)
    return cells


def bind_json(cells) -> list[dict]:
    """The cells for summary.json: totals as means and shares."""
    return [{"cpus": c["cpus"], "variant": c["variant"], "driver": c["driver"],
             "total_iops": c["total"]["iops_mean"] if c["total"] else None,
             "shares": c["total"]["shares"] if c["total"] else None,
             "vs_null_blk_shared": (c["vs_ref"] or {}).get("ratio")} for c in cells]
