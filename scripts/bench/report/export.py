"""summary.csv, summary.json and the copy of meta.json in OUTDIR."""

from __future__ import annotations

import csv
import json
import os
import shutil

from common import WARNINGS, warn
from matrix import matrix_json
from bindtable import bind_cells, bind_json
from policies import policy_cells

CSV_FIELDS = [
    "cpus", "scenario", "variant", "driver", "job", "n",
    "iops_mean", "iops_stdev", "iops_min", "iops_max",
    "ref", "ratio", "ratio_spread", "ratio_ci_lo", "ratio_ci_hi", "ratio_df", "ratio_p",
    "ratio_rmin", "ratio_rmax",
    "p50_ns", "p99_ns", "p999_ns", "lat_mean_ns", "ctx_per_io", "bw_mean", "slow_handoffs",
    "slow_handoffs_run", "iops_step", "ratio_res",
]
# Written with 6 significant digits; other floats are rounded to 3 decimals.
SIG6 = {"ratio", "ratio_spread", "ratio_ci_lo", "ratio_ci_hi", "ratio_df", "ratio_p", "ratio_rmin",
        "ratio_rmax", "ctx_per_io", "ratio_res"}


def _cell(k, v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}" if k in SIG6 else round(v, 3)
    return v


def write_csv(rows, path):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: _cell(k, r.get(k)) for k in CSV_FIELDS})


def write_json(rows, verd, tls, meta, plots, path, clock, matrix=(), source=None):
    """summary.json; `synthetic` is true when any input was (header.source_of)."""
    obj = {
        "synthetic": bool(source and source.get("synthetic")),
        "source": source,
        "meta": meta,
        "clock": clock,
        "rows": rows,
        "verdicts": verd,
        "peak_matrix": matrix_json(matrix),
        "policies": policy_cells(rows),
        "bind_tags": bind_json(bind_cells(rows)),
        "policy_switch": [{"cpus": t.cpus, "driver": t.driver, "variant": t.variant,
                           "switches": [{"t_ms": a, "policy": b} for a, b in t.switches],
                           "segments": t.segments} for t in tls],
        "plots": plots,
        "warnings": WARNINGS,
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


def family_meta(meta: dict, scenarios) -> dict:
    """meta.json for a report of `scenarios` only: their boots and titles,
    no local path (`checkout`), and `commit` null where none was recorded."""
    out = {k: v for k, v in meta.items() if k != "checkout"}
    out.setdefault("commit", None)
    if isinstance(meta.get("boots"), list):
        boots = [{**b, "scenarios": [s for s in b.get("scenarios") or [] if s in scenarios]}
                 for b in meta["boots"] if isinstance(b, dict)]
        out["boots"] = [b for b in boots if b["scenarios"]]
    if isinstance(meta.get("scenarios"), dict):
        out["scenarios"] = {k: v for k, v in meta["scenarios"].items() if k in scenarios}
    return out


def write_meta(meta: dict, outdir: str) -> None:
    with open(os.path.join(outdir, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2, ensure_ascii=False)
        f.write("\n")


def copy_meta(results, outdir):
    """meta.json next to report.md (unless it is already there)."""
    src, dst = os.path.join(results, "meta.json"), os.path.join(outdir, "meta.json")
    if not os.path.isfile(src):
        return
    if os.path.exists(dst) and os.path.samefile(src, dst):
        return
    try:
        shutil.copyfile(src, dst)
    except OSError as e:
        warn(f"cannot copy {src} to {dst}: {e}")
