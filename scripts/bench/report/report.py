#!/usr/bin/python3
"""Host-side report generator for rnull benchmark results.

    report.py RESULTS OUTDIR [--no-plots]

Reads the fio JSON tree produced by the guest benchmark run (see
parse.py and README.md for both layouts) and writes summary.csv,
summary.json, report.md, meta.json and PNG plots into OUTDIR.

Only the standard library is required for the tables; scipy is used for
the t distribution when importable (else a built-in one), matplotlib (Agg)
for the plots (else they are skipped with a warning).

Modules: parse (tree, fio JSON, meta), timeline (policy_switch logs), rows
(statistics rows and references), stats, thresholds, clocks, matrix (peak
matrix), policies (the tag-policy table), verdicts, fmt, plots, markdown,
export (CSV/JSON/meta copy).
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from common import WARNINGS  # noqa: E402
from export import copy_meta, write_csv, write_json  # noqa: E402
from header import source_of  # noqa: E402
from markdown import write_md  # noqa: E402
from matrix import peak_matrix  # noqa: E402
from parse import collect, load_meta  # noqa: E402
from plots import make_plots  # noqa: E402
from policies import policy_cells  # noqa: E402
from rows import summarize  # noqa: E402
from timeline import collect_timelines  # noqa: E402
from verdicts import verdicts  # noqa: E402


def generate(results: str, outdir: str, plots: bool = True) -> dict:
    """Build all outputs; returns {'rows', 'verdicts', 'timelines', 'plots',
    'warnings', 'clock', 'peak_matrix', 'policies', 'source'}."""
    WARNINGS.clear()
    os.makedirs(outdir, exist_ok=True)
    meta = load_meta(results)
    res = collect(results, meta)
    rows = summarize(res)
    tls = collect_timelines(res.boots)
    matrix = peak_matrix(rows)
    verd = verdicts(rows, meta, res.clock, matrix)
    pl = make_plots(rows, tls, meta, outdir, res.clock, verd, matrix, res.boots) if plots else {}
    source = source_of(meta, res.files, res.synthetic_files)
    copy_meta(results, outdir)
    write_csv(rows, os.path.join(outdir, "summary.csv"))
    write_json(rows, verd, tls, meta, pl, os.path.join(outdir, "summary.json"), res.clock, matrix,
               source)
    write_md(rows, verd, tls, meta, pl, os.path.join(outdir, "report.md"),
             res.clock, res.boots, matrix, source)
    return {"rows": rows, "verdicts": verd, "timelines": tls, "plots": pl,
            "warnings": list(WARNINGS), "clock": res.clock, "peak_matrix": matrix,
            "policies": policy_cells(rows), "source": source}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description="Summarize rnull fio benchmark results (RESULTS tree of fio "
                    "JSON files) into summary.csv, summary.json, report.md, meta.json "
                    "and PNG plots.",
        epilog="Layouts: RESULTS/meta.json + RESULTS/c<cpus>/<scenario>/<variant>/<driver>/"
               "r<N>.json (one directory per guest boot), or the old "
               "RESULTS/<scenario>/<variant>/<driver>/r<N>.json; "
               "<variant>/ref and <variant>/params are optional; "
               "policy_switch/timeline/<driver>/<job>_iops.<k>.log + switches.txt. "
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
          f"({res['clock']} clock) -> {a.outdir}/report.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
