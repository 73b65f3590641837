#!/usr/bin/python3
"""bench/results/README.md: the index of the reference runs, one directory
per scenario family (bench/results/<family>/), from their meta.json and
summary.json.

    index.py [RESULTS_DIR]     (default: bench/results of this checkout)
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from clocks import clock_of  # noqa: E402
from common import ordered  # noqa: E402
from fmt import md_escape  # noqa: E402
from names import SCENARIO_ORDER  # noqa: E402
from parse import load_json  # noqa: E402

INTRO = """# Reference benchmark runs

One directory per `make bench` scenario family, holding the reference run of
its scenarios: `report.md` (headed by the commit, the clock and the
thresholds its verdicts were judged by), `summary.csv`, `summary.json`,
`meta.json` and the plots. A plain `make bench` writes under `out/bench/`
and leaves this directory alone; `make bench RECORD=1 SCENARIOS="..."`
replaces the families of the scenarios it runs and rewrites this index
(scripts/bench/report/index.py). The raw fio results are not kept.

A commit "not recorded" means the run's meta.json has none. "As written"
verdicts were judged when the run was reported and cannot be judged again
from what git keeps; "judged" ones were judged by today's report.
"""


def family_row(results: str, family: str) -> list[str] | None:
    d = os.path.join(results, family)
    meta = load_json(os.path.join(d, "meta.json")) if os.path.isfile(
        os.path.join(d, "meta.json")) else None
    summary = load_json(os.path.join(d, "summary.json")) if os.path.isfile(
        os.path.join(d, "summary.json")) else None
    if meta is None or summary is None:
        return None
    scens = list(meta.get("scenarios") or {}) or sorted(
        {r.get("scenario") for r in summary.get("rows") or []})
    commit = meta.get("commit")
    every = [v for vs in (summary.get("verdicts") or {}).values() for v in vs]
    verd = [v for v in every if "pass" in v]
    judged = "judged" if isinstance(summary.get("source"), dict) else "as written"
    if verd:
        n_ok = sum(1 for v in verd if v["pass"])
        n_und = sum(1 for v in verd if v["pass"] is None)
        checks = (f"{n_ok}/{len(verd)} pass" + (f", {n_und} undecided" if n_und else "")
                  + f" ({judged})")
    elif every:
        checks = f"{len(every)} comparisons, no target ({judged})"
    else:
        checks = "none"
    synthetic = " **SYNTHETIC**" if summary.get("synthetic") or meta.get("synthetic") else ""
    return [f"[{md_escape(family)}]({family}/report.md){synthetic}",
            ", ".join(f"`{s}`" for s in ordered(scens, SCENARIO_ORDER)),
            f"`{commit}`" if commit else "not recorded",
            clock_of(meta), str(meta.get("date", "–"))[:10],
            f"{meta.get('rounds', '–')} × {meta.get('runtime_s', '–')} s", checks]


def write_index(results: str) -> str:
    families = ordered([n for n in os.listdir(results)
                        if os.path.isfile(os.path.join(results, n, "report.md"))],
                       SCENARIO_ORDER)
    head = ["family", "scenarios", "commit", "clock", "date", "rounds × runtime", "verdicts"]
    body = [r for r in (family_row(results, f) for f in families) if r]
    lines = ([INTRO, "| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
             + ["| " + " | ".join(r) + " |" for r in body])
    path = os.path.join(results, "README.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    results = argv[0] if argv else os.path.join(HERE, "..", "..", "..", "bench", "results")
    if not os.path.isdir(results):
        print(f"index: error: {results}: not a directory", file=sys.stderr)
        return 2
    print(f"index: {write_index(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
