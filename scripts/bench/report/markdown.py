"""report.md: header, the clock and what it cannot show, verdict summary,
then per scenario its plots, tables (each captioned with the clock) and
verdicts."""

from __future__ import annotations

from bindtable import bind_cells
from clocks import CANNOT_SHOW, WALL
from common import WARNINGS, dig, ordered
from fmt import fmt_ci, fmt_cmp, fmt_iops, fmt_mibs, fmt_ratio, fmt_us, md_escape
from header import header
from names import BIND_DEVICES, BIND_REF_VARIANT, PER_JOB_SCENARIOS, RATIO_HEAD, REF_DRIVER, SCENARIO_ORDER, SLICE_WORKLOADS
from parse import PCT_KEYS
from plots import scenario_title
from policies import SUB_LABEL, SUB_WHAT, policy_cells
from rows import by_cpus, by_scenario, row_cmp, slice_cells
import slicetable


def md_table(head, body) -> list[str]:
    """Markdown table lines from a header and rows of cells."""
    return (["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
            + ["| " + " | ".join(c) + " |" for c in body])


def caption(text, clock) -> list[str]:
    """A table caption that names the clock."""
    return [f"_{text}; {clock} clock._", ""]


def _mean_sd(r):
    return "–" if r is None else f"{fmt_iops(r['iops_mean'])} ± {fmt_iops(r['iops_stdev'])}"


def scenario_table(rs, scen, clock):
    multi = len({r["cpus"] for r in rs}) > 1
    has_job = any(r["job"] for r in rs)
    has_ratio = any(r["ratio"] is not None for r in rs)
    has_ci = has_ratio and clock == WALL
    has_pct = any(r["p50_ns"] is not None for r in rs)
    has_lat = scen in PER_JOB_SCENARIOS and any(r["lat_mean_ns"] is not None for r in rs)
    has_ctx = any(r["ctx_per_io"] is not None for r in rs) and scen == "starvation"
    ref = next((r["ref"] for r in rs if r["ref"]), REF_DRIVER)
    head = ((["vCPUs"] if multi else []) + ["Variant", "Driver"] + (["Job"] if has_job else [])
            + ["n", "IOPS (mean ± sd)", "min – max"])
    if has_ratio:
        head.append(RATIO_HEAD.get(scen, f"ratio vs {ref}"))
    if has_ci:
        head.append("95% CI, Welch p")
    if has_pct:
        head += ["p50 µs", "p99 µs", "p99.9 µs"]
    if has_lat:
        head.append("mean lat µs")
    if has_ctx:
        head.append("ctx/IO")
    body = []
    for r in rs:
        c = ([str(r["cpus"])] if multi else []) + [md_escape(r["variant"]), md_escape(r["driver"])]
        if has_job:
            c.append(md_escape(r["job"]))
        c += [str(r["n"]), _mean_sd(r), f"{fmt_iops(r['iops_min'])} – {fmt_iops(r['iops_max'])}"]
        if has_ratio:
            c.append(fmt_ratio(r["ratio"], r["ratio_spread"]) if clock == WALL
                     else fmt_cmp(row_cmp(r), clock))
        if has_ci:
            c.append(fmt_ci(row_cmp(r)))
        if has_pct:
            c += [fmt_us(r[f"{p}_ns"]) for p in PCT_KEYS]
        if has_lat:
            c.append(fmt_us(r["lat_mean_ns"]))
        if has_ctx:
            c.append("–" if r["ctx_per_io"] is None else f"{r['ctx_per_io']:.3f}")
        body.append(c)
    cap = (f"`{scen}`: IOPS mean ± sample stdev over rounds"
           + (", ratio with its 95% CI and Welch's p" if has_ci else "")
           + (", ratio with the per-round min–max" if has_ratio and not has_ci else ""))
    return caption(cap, clock) + md_table(head, body)


def herrmann_tables(rs, clock):
    """Markdown tables in Herrmann's layout: numjobs down, slices across,
    IOPS mean (stdev)."""
    lines = []
    groups = by_cpus(rs)
    for cpus, grs in groups.items():
        cells = slice_cells(grs)
        boot = f"{cpus} vCPU, " if len(groups) > 1 else ""
        for wl in ordered({w for w, _, _ in cells}, SLICE_WORKLOADS):
            tss = sorted({ts for w, ts, _ in cells if w == wl})
            njs = sorted({nj for w, _, nj in cells if w == wl})
            n = cells[(wl, tss[0], njs[0])]["n"]
            body = [[str(nj)] + ["–" if cells.get((wl, ts, nj)) is None else
                                 f"{cells[(wl, ts, nj)]['iops_mean']:,.1f} "
                                 f"({cells[(wl, ts, nj)]['iops_stdev']:,.1f})" for ts in tss]
                    for nj in njs]
            lines += [f"**{wl}** (fio IOPS, mean (stdev) over {n} runs, {boot}{clock} clock):", ""]
            lines += md_table(["jobs"] + [f"time_slice_us={ts}" for ts in tss], body) + [""]
    return lines


def slice_sections(rs, boots, clock):
    """slicetable's tables for `slices` (side by side with the schedulers,
    the drive's counters, and the issue's targets) or `slice_mix`."""
    lines = []
    if rs and rs[0]["scenario"] == "slice_mix":
        block = slicetable.mix_table(rs)
        return [f"{block[0]}; {clock} clock:", ""] + md_table(*block[1:]) + [""] if block else []
    st = slicetable.read_stats(boots)
    blocks = slicetable.side_by_side(rs, st) + [slicetable.counters_table(rs, boots)]
    for block in blocks:
        if block:
            cap, head, body = block
            lines += [f"{cap}; {clock} clock:", ""] + md_table(head, body) + [""]
    tg = slicetable.targets(rs, st)
    if tg:
        lines += ["**Herrmann's targets (issue 16), on the driver:**", ""]
        lines += [f"- {'✓' if t['pass'] else '✗'} {t['text']}" for t in tg] + [""]
    return lines


def peak_matrix_table(cells, clock):
    has_mod = any(c["rnull_mod_vs_null_blk"] for c in cells)
    has_ref = any(c["ref"] for c in cells)
    stat = "per-round min–max" if clock != WALL else "95% CI, Welch p"
    head = (["vCPUs", "row", "rnull IOPS", "null_blk IOPS", f"rnull/null_blk ({stat})"]
            + ([f"rnull_mod/null_blk ({stat})"] if has_mod else [])
            + (["cost vs rnull ref"] if has_ref else []))
    body = []
    for c in cells:
        nb = _mean_sd(c["null_blk"])
        if c["null_blk"] is not None and c["null_blk_variant"] != c["variant"]:
            nb += f" ({md_escape(c['null_blk_variant'])})"
        row = [str(c["cpus"]), md_escape(c["variant"]), _mean_sd(c["rnull"]), nb,
               fmt_cmp(c["rnull_vs_null_blk"] or {}, clock)]
        if has_mod:
            row.append(fmt_cmp(c["rnull_mod_vs_null_blk"] or {}, clock))
        if has_ref:
            row.append("–" if not c["cost_vs_ref"] else
                       f"{fmt_cmp(c['cost_vs_ref'], clock)} vs {md_escape(c['ref'])}")
        body.append(row)
    cap = ("Peak matrix: IOPS mean ± sd over rounds; rnull/null_blk against null_blk of "
           "the same row, or of its reference variant (in parentheses); cost = rnull of "
           "the row / rnull of its reference variant")
    return caption(cap, clock) + md_table(head, body) + [""]


def _light_cell(c):
    if c["light_iops"] is None:
        return "–"
    s = fmt_iops(c["light_iops"])
    if c["light_vs_solo"] is not None:
        return f"{s} / {fmt_iops(c['solo_iops'])} = **{c['light_vs_solo']:.3f}**"
    return s


def _split_cell(c):
    if c["split"] is None:
        return "–"
    a, b = c["split_jobs"]
    return f"{a} {fmt_mibs(c['bw'][a])} / {b} {fmt_mibs(c['bw'][b])} MiB/s: **{c['split']:.3f}**"


def _devices_cell(c):
    """IOPS per job, for sub-scenarios without a busy and a light job."""
    if c["busy_job"] or c["light_job"]:
        return ""
    return " · ".join(f"{md_escape(j)} {fmt_iops(v)}" for j, v in c["jobs"].items())


def _handoffs_cell(c):
    """Slow hand-offs while I/O ran, and over the whole runs in brackets
    where that differs."""
    h, run = c["slow_handoffs"], c.get("slow_handoffs_run")
    if h is None:
        return "–"
    return str(h) if run is None or run == h else f"{h} ({run})"


def policies_table(cells, clock):
    """The `policies` scenario as one table: sub-scenario × policy."""
    multi = len({c["cpus"] for c in cells}) > 1
    head = ((["vCPUs"] if multi else [])
            + ["scenario", "policy", "busy IOPS", "light IOPS (/ solo)", "light p99 µs",
               "bandwidth split (min/max)", "IOPS per device", "slow hand-offs"])
    body = []
    for c in cells:
        h = _handoffs_cell(c)
        body.append(([str(c["cpus"])] if multi else [])
                    + [md_escape(SUB_LABEL.get(c["sub"], c["sub"])), md_escape(c["policy"]),
                       fmt_iops(c["busy_iops"]), _light_cell(c),
                       fmt_us(c["light_p99_ns"]) if c["light_job"] else "",
                       _split_cell(c), _devices_cell(c), h])
    n = sorted({c["n"] for c in cells})
    rounds = "/".join(str(x) for x in n)
    cap = (f"Tag policies on the maintainers' scenarios: IOPS means over {rounds} "
           f"round{'s' if n != [1] else ''}; light job against the same job alone under the "
           "same policy; p99 of its completion latency; bandwidth of the smaller device over "
           "the larger; slow hand-offs summed over the rounds while fio's I/O ran (in brackets, "
           "over the whole runs, fio's start and end included, where they differ)")
    what = [f"- **{SUB_LABEL.get(s, s)}**: {SUB_WHAT[s]}" for s in
            dict.fromkeys(c["sub"] for c in cells) if s in SUB_WHAT]
    return what + [""] + caption(cap, clock) + md_table(head, body) + [""]


def bind_table(cells, clock):
    """`bind_tags` as one table: each variant's total IOPS, each device's
    share of it, and the total against null_blk on blk-mq's shared tags."""
    multi = len({c["cpus"] for c in cells}) > 1
    head = ((["vCPUs"] if multi else []) + ["tags", "driver", "total IOPS"]
            + [f"{d} share" for d in BIND_DEVICES]
            + [f"total vs null_blk {BIND_REF_VARIANT}"])
    body = []
    for c in cells:
        t = c["total"]
        shares = [("–" if t is None or t["shares"][d] is None else f"{t['shares'][d]:.1%}")
                  for d in BIND_DEVICES]
        body.append(([str(c["cpus"])] if multi else [])
                    + [md_escape(c["variant"]), md_escape(c["driver"]),
                       "–" if t is None else fmt_iops(t["iops_mean"])] + shares
                    + ["–" if c["vs_ref"] is None else fmt_cmp(c["vs_ref"], clock)])
    cap = ("Shared tags that bind: total IOPS of the 4 devices (mean over rounds), each "
           "device's share of it, and the total against C null_blk on blk-mq's shared tag "
           f"set (`{BIND_REF_VARIANT}`); `per-device`: a tag set per device of the same depth; "
           "`host-<policy>`: rnull's host budget of the same depth under that policy")
    return caption(cap, clock) + md_table(head, body) + [""]


def params_details(rows, clock):
    """The module parameters of each run (the `params` files), folded."""
    seen = set()
    ps = []
    for r in rows:   # one line per run, not per fio job
        k = (r["cpus"], r["variant"], r["driver"])
        if r.get("params") and k not in seen:
            seen.add(k)
            ps.append(r)
    if not ps:
        return []
    body = [[str(r["cpus"]), md_escape(r["variant"]), md_escape(r["driver"]),
             f"`{md_escape(r['params'])}`"] for r in ps]
    return (["<details><summary>Module parameters</summary>", ""]
            + caption("Module parameters per run (the `params` files)", clock)
            + md_table(["vCPUs", "variant", "driver", "parameters"], body)
            + ["", "</details>", ""])


def segments_table(tl, clock):
    jobs = list(tl.series)
    boot = f"{tl.cpus} vCPU, " if tl.cpus is not None else ""
    body = [[md_escape(s["policy"]), f"{s['start_ms'] / 1000:.1f}", f"{s['end_ms'] / 1000:.1f}"]
            + [fmt_iops(s["jobs"][j]) for j in jobs] for s in tl.segments]
    return ([f"Mean IOPS per policy segment ({tl.driver}, {tl.variant}; {boot}{clock} clock):", ""]
            + md_table(["Policy", "from s", "to s"] + [f"{j} IOPS" for j in jobs], body) + [""])


def clock_section(clock):
    return ([f"## What this clock cannot show ({clock})", ""]
            + [f"- {t}" for t in CANNOT_SHOW[clock]] + [""])


def verdict_summary(verd):
    """How many checks pass, and the others: failed, or undecided (the
    figure closer to its target than its resolution)."""
    allv = [(scen, v) for scen in ordered(verd, SCENARIO_ORDER) for v in verd[scen]
            if "pass" in v]
    if not allv:
        return []
    n_ok = sum(1 for _, v in allv if v["pass"])
    n_und = sum(1 for _, v in allv if v["pass"] is None)
    und = (f", {n_und} undecided (their figures lie closer to the target than fio's "
           "resolution: a longer RUNTIME decides them)" if n_und else "")
    return ([f"**Verdict summary:** {n_ok}/{len(allv)} checks pass{und}.", ""]
            + [f"- `{scen}` {v['text']}" for scen, v in allv if not v["pass"]] + [""])


def write_md(rows, verd, tls, meta, plots, path, clock=WALL, boots=(), matrix=(),
             source=None):
    """report.md; source: where the figures come from (header.source_of)."""
    scen_rows = by_scenario(rows)
    scens = ordered(set(scen_rows) | ({"policy_switch"} if tls else set()), SCENARIO_ORDER)
    L = header(meta, clock, boots, source, scens) + verdict_summary(verd) + clock_section(clock)
    if not scens:
        L += ["_No results found._", ""]
    for scen in scens:
        L += [f"## {md_escape(scenario_title(meta, scen))} (`{scen}`)", ""]
        notes = dig(meta, "scenarios", scen, "notes")
        if notes:
            L += [str(notes) if not isinstance(notes, list) else
                  "\n".join(f"- {n}" for n in notes), ""]
        for p in plots.get(scen, []):
            L += [f"![{scen}]({p})", ""]
        if scen == "peak" and matrix:
            L += peak_matrix_table(matrix, clock) + params_details(scen_rows[scen], clock)
        if scen == "slices" and scen in scen_rows:
            L += slice_sections(scen_rows[scen], boots, clock)
            L += herrmann_tables(scen_rows[scen], clock)
        if scen == "slice_mix" and scen in scen_rows:
            L += slice_sections(scen_rows[scen], boots, clock)
        cells = policy_cells(scen_rows[scen]) if scen == "policies" else []
        if cells:
            L += policies_table(cells, clock) + params_details(scen_rows[scen], clock)
        if scen == "bind_tags" and scen in scen_rows:
            cells = bind_cells(scen_rows[scen])
            L += bind_table(cells, clock) + params_details(scen_rows[scen], clock)
        if (scen == "peak" and matrix) or cells:
            L += ([f"<details><summary>All {scen} runs</summary>", ""]
                  + scenario_table(scen_rows[scen], scen, clock) + ["", "</details>", ""])
        elif scen in scen_rows:
            L += scenario_table(scen_rows[scen], scen, clock) + [""]
        if scen == "policy_switch":
            for tl in tls:
                if tl.segments:
                    L += segments_table(tl, clock)
        if verd.get(scen):
            L += ["**Verdicts:**", ""] + [f"- {v['text']}" for v in verd[scen]] + [""]
    if WARNINGS:
        L += ["## Warnings", ""] + [f"- {md_escape(w)}" for w in WARNINGS] + [""]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(L))
