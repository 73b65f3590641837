"""report.md's header: what was measured, at which commit, on which clock,
judged by which thresholds, and whether any of it is synthetic."""

from __future__ import annotations

import slicetable
import thresholds
from clocks import COMPARISON, LABEL, MEANS
from common import cpus_key, ordered
from fmt import fmt_wall
from names import HOTPATH_REF_VARIANT, REF_DRIVER, SCENARIO_ORDER

# slicetable.py's own targets (Herrmann's table, listed beside the verdicts).
SLICETABLE_TARGETS = ("TS0_SHARE", "GAIN_250", "BEST_SHARE", "RANDREAD_LOSS", "SINGLE_LOSS",
                      "RUNS_AGREE")
RESOLUTION_NOTE = ("a verdict whose figure lies closer to its target than the figure's "
                   "resolution (fio's IOPS count whole I/Os over whole milliseconds) is "
                   "undecided")


def source_of(meta: dict, files: int = 0, synthetic_files: int = 0) -> dict:
    """Where the figures come from: {synthetic, meta, files, synthetic_files}.
    synthetic is true when meta.json or any fio result is marked synthetic
    (synthetic_fixture.py marks both; a measured run marks neither)."""
    marked = meta.get("synthetic") is True if isinstance(meta, dict) else False
    return {"synthetic": marked or synthetic_files > 0, "meta": marked,
            "files": files, "synthetic_files": synthetic_files}


def summary_source(summary: dict, meta: dict) -> dict:
    """Where the figures of a report made again from its summary.json come
    from: the summary's own `source` if it has one, else meta.json's mark
    (the fio results were not looked at)."""
    src = summary.get("source") if isinstance(summary.get("source"), dict) else None
    out = dict(src) if src else {**source_of(meta), "files": None}
    out["synthetic"] = bool(out.get("synthetic") or summary.get("synthetic")
                            or source_of(meta)["synthetic"])
    out["from_summary"] = True
    return out


def synthetic_banner(source: dict) -> list[str]:
    """A warning no reader can miss, when any input is synthetic."""
    if not source or not source.get("synthetic"):
        return []
    why = []
    if source.get("meta"):
        why.append("meta.json is marked synthetic")
    if source.get("synthetic_files"):
        why.append(f"{source['synthetic_files']} of {source['files']} fio results are "
                   "marked synthetic")
    return [f"> **SYNTHETIC INPUT: nothing in this report was measured.** "
            f"{'; '.join(why)} (scripts/bench/report/synthetic_fixture.py writes such "
            "trees for the tests).", ""]


def input_line(source: dict) -> str:
    if not source:
        return "- **Input:** –"
    if source.get("synthetic"):
        return "- **Input:** **SYNTHETIC** (see above)"
    again = ("; this report was made again from the run's summary.json (its raw fio "
             "results are not in git)" if source.get("from_summary") else "")
    if source.get("files") is None:
        return ("- **Input:** measured: meta.json is not marked synthetic" +
                (again or " (the fio results were not at hand to check)"))
    return ("- **Input:** measured: neither meta.json nor any of the "
            f"{source['files']} fio results is marked synthetic{again}")


def commit_line(meta) -> str:
    c = meta.get("commit")
    if not c:
        return "- **Commit:** not recorded in meta.json"
    dirty = " (with changes not committed)" if str(c).endswith("-dirty") else ""
    return f"- **Commit:** `{c}`{dirty}"


def threshold_names(scenarios, clock) -> list[str]:
    """The thresholds.py names the verdicts of `scenarios` use on `clock`."""
    names = []
    for scen in scenarios:
        for n in thresholds.SCENARIO_THRESHOLDS.get(scen, ()):
            if thresholds.CLOCK_ONLY.get(n, clock) == clock and n not in names:
                names.append(n)
    return names


def _values(module, names):
    return ", ".join(f"`{n}` = {getattr(module, n)!r}" for n in names)


def resolution_note(source) -> str:
    n, known = (source or {}).get("rows"), (source or {}).get("rows_with_step")
    if n is None or known is None or known == n:
        return RESOLUTION_NOTE
    which = "no row" if not known else f"{known} of {n} rows"
    return (f"{RESOLUTION_NOTE}; {which} of this run has a known resolution (its fio results "
            "lack the runtime, or its summary.json predates `iops_step`), and a verdict "
            "without one is decided by its figure alone")


def thresholds_lines(scenarios, clock, judged=None, source=None) -> list[str]:
    """What the verdicts were judged by. judged: None when this report
    judged them now, else why they are kept as they were written."""
    names = threshold_names(scenarios, clock)
    slice_t = (f"; slicetable.py (Herrmann's targets): {_values(slicetable, SLICETABLE_TARGETS)}"
               if "slices" in scenarios else "")
    if names:
        now = f"thresholds.py: {_values(thresholds, names)}{slice_t}"
    elif "block035" in scenarios:
        now = "no numeric threshold: the verdicts compare figures of the run with each other"
    else:
        return ["- **Judged by:** nothing: these scenarios have no verdicts, only figures"]
    if judged is None:
        return [f"- **Judged by:** {now}; {resolution_note(source)}"]
    again = (f" For comparison, today's {now}." if names else "")
    return [f"- **Judged by:** the verdicts as written when the run was reported, not judged "
            f"again: {judged}; each verdict states its target.{again}"]


def guest_line(meta, boots):
    mem = meta.get("guest_mem", "?")
    cpus = sorted({b.cpus for b in boots if b.cpus is not None}, key=cpus_key)
    if len(boots) > 1 or meta.get("boots"):
        return f"{', '.join(str(c) for c in cpus)} vCPU (one boot per vCPU count), {mem} RAM"
    return f"{meta.get('guest_cpus', '?')} vCPU, {mem} RAM"


def facts(meta, clock, boots, source=None, scenarios=(), judged=None) -> list[str]:
    """The header's list: the scenarios, the commit, the clock and the host's
    QEMU, what the verdicts were judged by, whether the input is measured,
    then the run's other facts."""
    scenarios = ordered(scenarios, SCENARIO_ORDER)
    return ([f"- **Scenarios:** {', '.join(f'`{s}`' for s in scenarios)}"] if scenarios else []) + [
        commit_line(meta),
        f"- **Clock:** {LABEL[clock]}",
    ] + ([f"- **Host, QEMU:** {meta['host']}"] if meta.get("host") else []) + (
        thresholds_lines(scenarios, clock, judged, source)) + [
        input_line(source),
        f"- **Date:** {meta.get('date', '–')}",
        f"- **Kernel:** {meta.get('kernel', '–')}",
        f"- **Guest:** {guest_line(meta, boots)}",
        f"- **Rounds:** {meta.get('rounds', '–')} per (scenario, variant, driver)",
        f"- **Command:** `{meta.get('command', '–')}`",
        f"- **Wall time:** {fmt_wall(meta.get('wall_seconds'))}",
    ]


def header(meta, clock, boots, source=None, scenarios=()):
    return ["# rnull benchmark report", ""] + synthetic_banner(source) + facts(
        meta, clock, boots, source, scenarios) + [
        "",
        f"{MEANS[clock]}",
        "",
        "IOPS are mean ± sample stdev over rounds. Ratios are mean / reference mean "
        f"(reference: `{REF_DRIVER}` in the same scenario and variant; for `hotpath`, "
        f"variant `{HOTPATH_REF_VARIANT}` of the same driver) with spread "
        "ratio·√((sa/ma)²+(sb/mb)²). Latencies are completion-latency percentiles "
        "(clat) averaged over rounds.",
        "",
        f"On the {clock} clock a comparison A/B is reported as the {COMPARISON[clock]}.",
        "",
    ]
