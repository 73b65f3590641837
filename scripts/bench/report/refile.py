#!/usr/bin/python3
"""File one scenario family of a committed run as a reference directory.

    refile.py RUNDIR FAMILY OUTDIR [--no-plots]

RUNDIR is a report directory (report.md, summary.json, summary.csv,
meta.json, PNGs; its raw fio results are not in git). Where its
summary.json can be reported again, OUTDIR gets report.py --from-summary
--family FAMILY: the verdicts judged anew. Where it cannot (a summary.json
written before it kept the rounds' IOPS, or a family whose report needs raw
files, such as the slices' drive counters), the committed report is cut to
the family's sections and given today's header (commit, clock, QEMU, what
the verdicts were judged by, input), its verdict summary recounted from
summary.json; summary.json, summary.csv and meta.json keep the family's
part, and the PNGs the kept sections show are copied. Such verdicts are not
judged again, and the header says so.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from clocks import clock_of  # noqa: E402
from export import family_meta, write_meta  # noqa: E402
from header import facts, source_of  # noqa: E402
from markdown import verdict_summary  # noqa: E402
from names import family_scenarios  # noqa: E402
from parse import Boot, guest_cpus, load_json, load_meta  # noqa: E402
from report import SUMMARY_ROW_KEYS, from_summary  # noqa: E402

SECTION_SCEN_RE = re.compile(r"\(`([A-Za-z0-9_]+)`\)\s*$")
PNG_RE = re.compile(r"!\[[^\]]*\]\(([^)]+\.png)\)")
CLOCK_SECTION = "## What this clock cannot show"
WARNINGS_SECTION = "## Warnings"


def why_not_again(summary: dict, scenarios) -> str | None:
    """Why a family of this summary.json cannot be reported again; None if
    it can."""
    rows = [r for r in summary.get("rows") or [] if r.get("scenario") in scenarios]
    if any(k not in r for r in rows for k in SUMMARY_ROW_KEYS):
        return ("its summary.json was written before it kept each round's IOPS, so the "
                "figures cannot be compared again")
    if "slices" in scenarios:
        return ("its report shows the drive's counters and the schedulers' tunables, "
                "from raw files (r<N>.stats) git does not keep")
    if "policy_switch" in scenarios:
        return "its timeline comes from fio's IOPS logs, which git does not keep"
    return None


def split_report(md: str):
    """report.md as (title, old header list, intro, verdict summary,
    sections): each section is (heading, lines)."""
    lines = md.split("\n")
    i = 1
    while i < len(lines) and not lines[i].startswith("- **"):
        i += 1
    j = i
    while j < len(lines) and lines[j].startswith("- **"):
        j += 1
    k = j
    while k < len(lines) and not (lines[k].startswith("**Verdict summary")
                                  or lines[k].startswith("## ")):
        k += 1
    m = k
    while m < len(lines) and not lines[m].startswith("## "):
        m += 1
    sections = []
    for ln in lines[m:]:
        if ln.startswith("## "):
            sections.append((ln, [ln]))
        else:
            sections[-1][1].append(ln)
    return lines[0], lines[i:j], lines[j:k], lines[k:m], sections


def keep_sections(sections, scenarios):
    """The family's sections, the clock's, and the warnings that name one
    of the family's scenarios."""
    out = []
    for head, body in sections:
        m = SECTION_SCEN_RE.search(head)
        if m:
            if m[1] in scenarios:
                out.append((m[1], body))
        elif head.startswith(CLOCK_SECTION):
            out.append((None, body))
        elif head.startswith(WARNINGS_SECTION):
            warned = [ln for ln in body[1:] if any(s in ln for s in scenarios)]
            if warned:
                out.append((None, [body[0], ""] + warned + [""]))
    return out


def boots_of_meta(meta: dict) -> list:
    listed = meta.get("boots")
    if isinstance(listed, list) and listed:
        return [Boot(int(b["cpus"]), None) for b in listed if isinstance(b, dict) and "cpus" in b]
    return [Boot(guest_cpus(meta), None)]


def family_summary(summary: dict, meta: dict, scenarios) -> dict:
    """summary.json's part of the family (its keys as they were)."""
    out = dict(summary)
    out["meta"] = meta
    out["rows"] = [r for r in summary.get("rows") or [] if r.get("scenario") in scenarios]
    for key in ("verdicts", "plots"):
        if isinstance(summary.get(key), dict):
            out[key] = {k: v for k, v in summary[key].items() if k in scenarios}
    for key, scen in (("peak_matrix", "peak"), ("policies", "policies"),
                      ("policy_switch", "policy_switch")):
        if key in summary and scen not in scenarios:
            out[key] = []
    if isinstance(summary.get("warnings"), list):
        out["warnings"] = [w for w in summary["warnings"] if any(s in w for s in scenarios)]
    return out


def family_csv(src: str, dst: str, scenarios) -> None:
    with open(src, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, [r for r in reader if r.get("scenario") in scenarios]
    with open(dst, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def rehead(rundir: str, family: str, outdir: str, why: str) -> dict:
    """The committed report cut to the family and headed anew (see the
    module's docstring); returns {'scenarios', 'pngs', 'verdicts'}."""
    scenarios = family_scenarios(family)
    with open(os.path.join(rundir, "report.md"), encoding="utf-8") as f:
        title, _, intro, _, sections = split_report(f.read())
    summary = load_json(os.path.join(rundir, "summary.json")) or {}
    meta = family_meta(load_meta(rundir), scenarios)
    kept = keep_sections(sections, scenarios)
    present = [s for s, _ in kept if s]
    if not present:
        raise ValueError(f"{rundir}/report.md has no section of {', '.join(scenarios)}")
    verd = {s: v for s, v in (summary.get("verdicts") or {}).items() if s in scenarios}
    clock = clock_of(meta)
    head = facts(meta, clock, boots_of_meta(meta), {**source_of(meta), "files": None},
                 present, judged=why)
    body = [ln for _, lines in kept for ln in lines]
    md = [title, ""] + head + intro + verdict_summary(verd) + body
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md).rstrip("\n") + "\n")
    pngs = sorted({p for ln in body for p in PNG_RE.findall(ln)})
    for p in pngs:
        shutil.copyfile(os.path.join(rundir, p), os.path.join(outdir, p))
    write_meta(meta, outdir)
    with open(os.path.join(outdir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(family_summary(summary, meta, scenarios), f, indent=2, ensure_ascii=False)
        f.write("\n")
    family_csv(os.path.join(rundir, "summary.csv"), os.path.join(outdir, "summary.csv"),
               scenarios)
    return {"scenarios": present, "pngs": pngs, "verdicts": verd}


def refile(rundir: str, family: str, outdir: str, plots: bool = True) -> str:
    """OUTDIR from RUNDIR's family; returns how ("again" or the reason the
    report was cut instead)."""
    summary = load_json(os.path.join(rundir, "summary.json")) or {}
    why = why_not_again(summary, family_scenarios(family))
    if why is None:
        from_summary(rundir, outdir, plots=plots, family=family)
        return "again"
    rehead(rundir, family, outdir, why)
    return why


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="File one scenario family of a committed run "
                                             "(a report directory) in OUTDIR.")
    ap.add_argument("rundir", metavar="RUNDIR")
    ap.add_argument("family", metavar="FAMILY", help="a make bench scenario")
    ap.add_argument("outdir", metavar="OUTDIR")
    ap.add_argument("--no-plots", action="store_true")
    a = ap.parse_args(argv)
    try:
        how = refile(a.rundir, a.family, a.outdir, plots=not a.no_plots)
    except (OSError, ValueError) as e:
        print(f"refile: error: {e}", file=sys.stderr)
        return 2
    print(f"refile: {a.rundir} {a.family} -> {a.outdir}: "
          + ("reported again" if how == "again" else f"cut, not judged again ({how})"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
