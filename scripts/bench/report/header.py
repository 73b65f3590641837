"""report.md's header: what was measured, where, and whether any of it is
synthetic."""

from __future__ import annotations

from clocks import COMPARISON, LABEL, MEANS
from common import cpus_key
from fmt import fmt_wall
from names import HOTPATH_REF_VARIANT, REF_DRIVER


def source_of(meta: dict, files: int = 0, synthetic_files: int = 0) -> dict:
    """Where the figures come from: {synthetic, meta, files, synthetic_files}.
    synthetic is true when meta.json or any fio result is marked synthetic
    (synthetic_fixture.py marks both; a measured run marks neither)."""
    marked = meta.get("synthetic") is True if isinstance(meta, dict) else False
    return {"synthetic": marked or synthetic_files > 0, "meta": marked,
            "files": files, "synthetic_files": synthetic_files}


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
    return ("- **Input:** measured: neither meta.json nor any of the "
            f"{source.get('files', 0)} fio results is marked synthetic")


def guest_line(meta, boots):
    mem = meta.get("guest_mem", "?")
    cpus = sorted({b.cpus for b in boots if b.cpus is not None}, key=cpus_key)
    if len(boots) > 1 or meta.get("boots"):
        return f"{', '.join(str(c) for c in cpus)} vCPU (one boot per vCPU count), {mem} RAM"
    return f"{meta.get('guest_cpus', '?')} vCPU, {mem} RAM"


def header(meta, clock, boots, source=None):
    return [
        "# rnull benchmark report", "",
    ] + synthetic_banner(source) + [
        f"- **Date:** {meta.get('date', '–')}",
        f"- **Kernel:** {meta.get('kernel', '–')}",
        f"- **Clock:** {LABEL[clock]}",
        f"- **Guest:** {guest_line(meta, boots)}",
    ] + ([f"- **Host:** {meta['host']}"] if meta.get("host") else []) + [
        f"- **Rounds:** {meta.get('rounds', '–')} per (scenario, variant, driver)",
        f"- **Command:** `{meta.get('command', '–')}`",
        f"- **Wall time:** {fmt_wall(meta.get('wall_seconds'))}",
        input_line(source),
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
