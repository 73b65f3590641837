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

from clocks import clock_of  # noqa: E402
from common import WARNINGS, cpus_key, warn  # noqa: E402
from export import copy_meta, family_meta, write_csv, write_json, write_meta  # noqa: E402
from header import source_of, summary_source  # noqa: E402
from markdown import write_md  # noqa: E402
from matrix import peak_matrix  # noqa: E402
from names import family_scenarios  # noqa: E402
from parse import Boot, collect, load_json, load_meta  # noqa: E402
from plots import make_plots  # noqa: E402
from policies import policy_cells  # noqa: E402
from rows import link_references, summarize  # noqa: E402
from timeline import collect_timelines  # noqa: E402
from verdicts import verdicts  # noqa: E402

# What a summary.json row needs to be reported again.
SUMMARY_ROW_KEYS = ("cpus", "scenario", "variant", "driver", "job", "iops_mean", "iops_rounds",
                    "rounds", "variant_ref")


def generate(results: str, outdir: str, plots: bool = True, family: str | None = None) -> dict:
    """Build all outputs from a RESULTS tree, of every scenario or of one
    family's (names.family_scenarios); returns {'rows', 'verdicts',
    'timelines', 'plots', 'warnings', 'clock', 'peak_matrix', 'policies',
    'source'}."""
    WARNINGS.clear()
    os.makedirs(outdir, exist_ok=True)
    meta = load_meta(results)
    only = family_scenarios(family) if family else None
    res = collect(results, meta, only)
    rows = summarize(res)
    tls = collect_timelines(res.boots) if only is None or "policy_switch" in only else []
    if only is None:
        copy_meta(results, outdir)
    else:
        meta = family_meta(meta, only)
        write_meta(meta, outdir)
    return render(rows, tls, meta, res.clock, res.boots, outdir, plots,
                  source_of(meta, res.files, res.synthetic_files))


def from_summary(rundir: str, outdir: str, plots: bool = True,
                 family: str | None = None) -> dict:
    """The outputs again from a report's summary.json (and meta.json) in
    rundir, of every scenario or of one family's: rows as they were, their
    references, the peak matrix and the verdicts judged anew. A summary.json
    without the rounds' IOPS (older ones) cannot be reported again: raises
    ValueError."""
    WARNINGS.clear()
    summ = load_json(os.path.join(rundir, "summary.json"))
    if not summ or not isinstance(summ.get("rows"), list):
        raise ValueError(f"{rundir}/summary.json: no rows")
    meta = load_meta(rundir) if os.path.isfile(os.path.join(rundir, "meta.json")) else (
        summ.get("meta") or {})
    only = family_scenarios(family) if family else None
    rows = [r for r in summ["rows"] if only is None or r.get("scenario") in only]
    lacking = sorted({k for r in rows for k in SUMMARY_ROW_KEYS if k not in r})
    if lacking:
        raise ValueError(f"{rundir}/summary.json: rows without {', '.join(lacking)} "
                         "(written before summary.json kept them); cannot report them again")
    if "policy_switch" in {r["scenario"] for r in rows} or summ.get("policy_switch"):
        warn("policy_switch: its IOPS logs are not in summary.json; its timeline is left out")
    boots = [Boot(c, None) for c in sorted({r["cpus"] for r in rows}, key=cpus_key)]
    meta = family_meta(meta, only) if only else meta
    os.makedirs(outdir, exist_ok=True)
    write_meta(meta, outdir)
    return render(link_references(rows), [], meta, clock_of(meta), boots, outdir, plots,
                  summary_source(summ, meta))


def render(rows, tls, meta, clock, boots, outdir, plots, source) -> dict:
    """Matrix, verdicts, plots, summary.csv, summary.json and report.md."""
    # Rows whose figures have a known resolution (parse.iops_step).
    source = {**source, "rows": len(rows),
              "rows_with_step": sum(1 for r in rows if r.get("iops_step") is not None)}
    matrix = peak_matrix(rows)
    verd = verdicts(rows, meta, clock, matrix)
    pl = make_plots(rows, tls, meta, outdir, clock, verd, matrix, boots) if plots else {}
    write_csv(rows, os.path.join(outdir, "summary.csv"))
    write_json(rows, verd, tls, meta, pl, os.path.join(outdir, "summary.json"), clock, matrix,
               source)
    write_md(rows, verd, tls, meta, pl, os.path.join(outdir, "report.md"),
             clock, boots, matrix, source)
    return {"rows": rows, "verdicts": verd, "timelines": tls, "plots": pl,
            "warnings": list(WARNINGS), "clock": clock, "peak_matrix": matrix,
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
               "Warnings go to stderr; exit status is 0 unless RESULTS is not a directory "
               "or --from-summary cannot report it again.")
    ap.add_argument("results", metavar="RESULTS", help="benchmark results directory")
    ap.add_argument("outdir", metavar="OUTDIR", help="output directory (created if needed)")
    ap.add_argument("--no-plots", action="store_true", help="skip PNG generation")
    ap.add_argument("--family", metavar="SCENARIO",
                    help="only this make bench scenario's report (slices: slices and "
                         "slice_mix); meta.json keeps its boots and title only")
    ap.add_argument("--from-summary", action="store_true",
                    help="RESULTS is a report directory: report its summary.json again "
                         "(verdicts judged anew; the raw fio results are not needed)")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.results):
        print(f"report: error: {a.results}: not a directory", file=sys.stderr)
        return 2
    if a.from_summary:
        try:
            res = from_summary(a.results, a.outdir, plots=not a.no_plots, family=a.family)
        except ValueError as e:
            print(f"report: error: {e}", file=sys.stderr)
            return 2
    else:
        res = generate(a.results, a.outdir, plots=not a.no_plots, family=a.family)
    n_png = sum(len(v) for v in res["plots"].values())
    print(f"report: {len(res['rows'])} rows, {n_png} plots, {len(res['warnings'])} warnings "
          f"({res['clock']} clock) -> {a.outdir}/report.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
