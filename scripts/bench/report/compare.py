#!/usr/bin/python3
"""Compare two benchmark runs.

    compare.py RUN_A RUN_B

RUN_A and RUN_B are report directories holding summary.json (or the
summary.json files themselves). For every (cpus, scenario, variant, driver,
job) row present in both it prints IOPS A, IOPS B and their relative
difference (B − A) / A, then the same for the ratios rnull/null_blk, and the
largest |relative difference| of each, as markdown. The runs "agree" when
both maxima are within thresholds.COMPARE_AGREE_REL. Exit status 0 always
(a missing or broken summary.json is reported on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from fmt import md_escape  # noqa: E402
from markdown import md_table  # noqa: E402
from names import REF_DRIVER  # noqa: E402
from thresholds import COMPARE_AGREE_REL  # noqa: E402


def load(path: str):
    """(meta, {key: row}) of a run; None if unreadable."""
    if os.path.isdir(path):
        path = os.path.join(path, "summary.json")
    try:
        with open(path, encoding="utf-8") as f:
            obj = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"compare: error: {path}: {e}", file=sys.stderr)
        return None
    meta = obj.get("meta") or {}
    rows = {}
    for r in obj.get("rows") or []:
        cpus = r.get("cpus", meta.get("guest_cpus"))  # old summaries: one boot
        rows[(cpus, r["scenario"], r["variant"], r["driver"], r.get("job", ""))] = r
    return meta, obj.get("clock") or meta.get("clock") or "wall", rows


def rel(a, b):
    return None if a in (None, 0) or b is None else (b - a) / a


def _pct(x):
    return "–" if x is None else f"{x:+.3%}"


def _key_cells(k):
    cpus, scen, var, drv, job = k
    return ["–" if cpus is None else str(cpus), md_escape(scen), md_escape(var),
            md_escape(drv + (f"/{job}" if job else ""))]


def _table(keys, a, b, field, fmt):
    """Table lines and the (|rel|, key) maximum of one field."""
    body, worst = [], (None, None)
    for k in keys:
        d = rel(a[k].get(field), b[k].get(field))
        if d is not None and (worst[0] is None or abs(d) > worst[0]):
            worst = (abs(d), k)
        body.append(_key_cells(k) + [fmt(a[k].get(field)), fmt(b[k].get(field)), _pct(d)])
    head = ["vCPUs", "scenario", "variant", "driver"]
    return head, body, worst


def _worst_line(what, worst):
    if worst[0] is None:
        return f"- max \\|relative difference\\| of {what}: –"
    return (f"- max \\|relative difference\\| of {what}: {worst[0]:.3%} "
            f"({' '.join(_key_cells(worst[1]))})")


def compare(path_a: str, path_b: str) -> tuple[list[str], dict]:
    """Markdown lines and {'iops_max_rel', 'ratio_max_rel', 'agree', 'rows'}."""
    ra, rb = load(path_a), load(path_b)
    if ra is None or rb is None:
        return ["_Cannot compare: see the errors above._"], {}
    (ma, ca, a), (mb, cb, b) = ra, rb
    keys = [k for k in a if k in b]
    L = ["# Comparison of two benchmark runs", "",
         f"- **A:** `{path_a}` ({ca} clock, {ma.get('date', '–')})",
         f"- **B:** `{path_b}` ({cb} clock, {mb.get('date', '–')})",
         f"- rows in both: {len(keys)}; only in A: {len(a) - len(keys)}; "
         f"only in B: {len(b) - len(keys)}", ""]
    if ca != cb:
        L += [f"_Warning: the runs use different clocks ({ca} and {cb})._", ""]
    clock = f"{ca} clock" if ca == cb else f"A: {ca}, B: {cb} clock"
    head, body, w_iops = _table(keys, a, b, "iops_mean",
                                lambda v: "–" if v is None else f"{v:,.1f}")
    L += [f"_IOPS (mean over rounds); relative difference (B − A) / A; {clock}._", ""]
    L += (md_table(head + ["IOPS A", "IOPS B", "rel. diff"], body) if body
          else ["_No rows in common._"]) + [""]
    rkeys = [k for k in keys if k[3] == "rnull"
             and str(a[k].get("ref") or "").startswith(REF_DRIVER)
             and str(b[k].get("ref") or "").startswith(REF_DRIVER)]
    head, body, w_ratio = _table(rkeys, a, b, "ratio",
                                 lambda v: "–" if v is None else f"{v:.4f}")
    if rkeys:
        L += [f"_Ratios rnull/{REF_DRIVER}; relative difference (B − A) / A; {clock}._", ""]
        L += md_table(head + ["ratio A", "ratio B", "rel. diff"], body) + [""]
    agree = all(w[0] is None or w[0] <= COMPARE_AGREE_REL for w in (w_iops, w_ratio))
    L += [_worst_line("IOPS", w_iops), _worst_line(f"rnull/{REF_DRIVER}", w_ratio),
          f"- runs agree within {COMPARE_AGREE_REL:.1%}: **{'yes' if agree and keys else 'no'}**",
          ""]
    return L, {"iops_max_rel": w_iops[0], "ratio_max_rel": w_ratio[0],
               "agree": bool(agree and keys), "rows": len(keys)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description="Compare two benchmark runs (directories holding summary.json): "
                    "IOPS and rnull/null_blk ratios of the rows present in both, as markdown.",
        epilog="Exit status 0 always.")
    ap.add_argument("run_a", metavar="RUN_A")
    ap.add_argument("run_b", metavar="RUN_B")
    a = ap.parse_args(argv)
    lines, _ = compare(a.run_a, a.run_b)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
