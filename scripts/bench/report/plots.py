"""PNG plots (matplotlib, Agg). Without matplotlib the report is written
without plots and with a warning.

With several boots, the plots of a scenario other than the peak matrix
are made once per boot, named <plot>_c<cpus>.png.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from clocks import VIRTUAL
from common import dig, num, ordered, warn
from fmt import fmt_iops, fmt_ratio, fmt_us
from names import (DRIVER_ORDER, HOTPATH_REF_VARIANT, PER_JOB_SCENARIOS, POLICIES_SUBS,
                   POLICY_ORDER, REF_DRIVER, SCENARIO_ORDER, SLICE_RE, SLICE_WORKLOADS,
                   VARIANT_ORDER, variant_number)
from parse import PCT_KEYS
from policies import SUB_LABEL, find_cell, policy_cells
from rows import by_cpus, find_row
import slicetable
from stats import ratio_spread
from thresholds import (BUSCH_KEEP_FLOOR, BUSCH_LOSE_CEILING, FAIRNESS_LAT_FACTOR,
                        FAIRNESS_TARGET_RATIO, HOST_COST_FLOOR, PEAK_AHEAD_RATIO, SPLIT_FLOOR)

PCT_LABEL = {"p50": "p50", "p99": "p99", "p999": "p99.9"}
DRIVER_COLORS = {"rnull": "#1f77b4", "null_blk": "#ff7f0e",
                 "rnull_mod": "#2ca02c"}
EXTRA_COLORS = ["#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                "#bcbd22", "#17becf"]
DPI = 110


def scenario_title(meta, scen):
    t = dig(meta, "scenarios", scen, "title")
    return str(t) if t else scen


def _plt():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except Exception as e:  # ImportError or backend problems
        warn(f"matplotlib unavailable ({e}); skipping plots")
        return None


def _color(drv, i=0):
    return DRIVER_COLORS.get(drv, EXTRA_COLORS[i % len(EXTRA_COLORS)])


@dataclass
class Dest:
    """Where plots go: the directory and a suffix for the file names
    ("_c4" for the plots of the 4-vCPU boot when there are several)."""
    dir: str
    sfx: str = ""


def _save(plt, fig, dest: Dest, name):
    root, ext = os.path.splitext(name)
    name = f"{root}{dest.sfx}{ext}"
    path = os.path.join(dest.dir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return name


def _save_fig(plt, fig, dest: Dest, name):
    """_save for a figure that may not exist (nothing to plot)."""
    return None if fig is None else _save(plt, fig, dest, name)


def _kfmt(ax, axis="y"):
    from matplotlib.ticker import FuncFormatter
    f = FuncFormatter(lambda v, _: fmt_iops(v) if v else "0")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(f)


def plot_grouped_bars(plt, rows, scen, dest, title, group_key="variant",
                      series_key="driver", groups_order=(), series_order=DRIVER_ORDER,
                      ylabel="IOPS", annotate_ratio=True, fname=None, notes=None):
    """Bars per group (x) and series (colour); notes: {group: (text, colour)}
    drawn above the group."""
    rs = [r for r in rows if r["scenario"] == scen]
    if not rs:
        return None
    groups = ordered({r[group_key] for r in rs}, groups_order)
    series = ordered({r[series_key] for r in rs}, series_order)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(groups) * max(1, len(series)) / 2 + 2), 4.6))
    width = 0.8 / max(1, len(series))
    ymax = 0
    for si, s in enumerate(series):
        xs, ys, es, rr = [], [], [], []
        for gi, g in enumerate(groups):
            r = next((x for x in rs if x[group_key] == g and x[series_key] == s), None)
            if r is None:
                continue
            xs.append(gi - 0.4 + width * (si + 0.5))
            ys.append(r["iops_mean"])
            es.append(r["iops_stdev"])
            rr.append(r)
            ymax = max(ymax, r["iops_mean"] + r["iops_stdev"])
        color = _color(s, si) if series_key == "driver" else EXTRA_COLORS[si % len(EXTRA_COLORS)] if si > 1 else ("#1f77b4", "#ff7f0e")[si]
        bars = ax.bar(xs, ys, width * 0.95, yerr=es, capsize=4, label=s or "total",
                      color=color, edgecolor="black", linewidth=0.5)
        if annotate_ratio:
            for b, r in zip(bars, rr):
                if r["ratio"] is not None and r["ratio"] != 1.0:
                    ax.annotate(f"×{r['ratio']:.2f}", (b.get_x() + b.get_width() / 2,
                                b.get_height() + (r["iops_stdev"] or 0)),
                                ha="center", va="bottom", fontsize=8,
                                xytext=(0, 2), textcoords="offset points")
    for gi, g in enumerate(groups):
        if notes and g in notes:
            text, color = notes[g]
            ax.text(gi, ymax * 1.1, text, ha="center", va="bottom", fontsize=9,
                    color=color, fontweight="bold")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, ymax * 1.3 if ymax else 1)
    _kfmt(ax)
    ax.set_title(title, fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    has_r = annotate_ratio and any(r["ratio"] not in (None, 1.0) for r in rs)
    ref = next((r["ref"] for r in rs if r["ref"]), REF_DRIVER)
    ax.legend(fontsize=9, loc="upper left", ncol=max(1, len(series)),
              title=f"×N = ratio to {ref}" if has_r else None, title_fontsize=8)
    return _save(plt, fig, dest, fname or f"{scen}.png")


def _depth_series(rows, scen):
    """driver -> sorted [(depth, row)] for variants with a number in them."""
    out = {}
    for r in rows:
        if r["scenario"] != scen or r["job"] != "":
            continue
        d = variant_number(r["variant"])
        if d is None:
            warn(f"{scen}: variant {r['variant']!r} has no depth number; not plotted")
            continue
        out.setdefault(r["driver"], []).append((d, r))
    for v in out.values():
        v.sort(key=lambda x: x[0])
    return {k: out[k] for k in ordered(out, DRIVER_ORDER)}


def _log2_axis(ax, depths):
    from matplotlib.ticker import FixedLocator, NullLocator
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(sorted(set(depths))))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(d) for d in sorted(set(depths))])


def _log_us_axis(ax):
    """Log y axis with plain-number labels at 1-2-5 steps."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def plot_qd_sweep(plt, rows, dest, title):
    series = _depth_series(rows, "qd_sweep")
    if not series:
        return []
    names = []
    depths = [d for v in series.values() for d, _ in v]
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for i, (drv, pts) in enumerate(series.items()):
        ax.errorbar([d for d, _ in pts], [r["iops_mean"] for _, r in pts],
                    yerr=[r["iops_stdev"] for _, r in pts], marker="o", capsize=4,
                    label=drv, color=_color(drv, i))
    _log2_axis(ax, depths)
    ax.set_xlabel("iodepth")
    ax.set_ylabel("IOPS")
    ax.set_ylim(bottom=0)
    _kfmt(ax)
    ax.set_title(title, fontsize=11)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9)
    names.append(_save(plt, fig, dest, "qd_sweep_iops.png"))

    have_lat = any(r["p50_ns"] is not None for v in series.values() for _, r in v)
    if have_lat:
        fig, axes = plt.subplots(1, 3, figsize=(13, 4.4), sharex=True)
        for ax, p in zip(axes, PCT_KEYS):
            for i, (drv, pts) in enumerate(series.items()):
                pp = [(d, r) for d, r in pts if r[f"{p}_ns"] is not None]
                if not pp:
                    continue
                ax.errorbar([d for d, _ in pp], [r[f"{p}_ns"] / 1000 for _, r in pp],
                            yerr=[(r[f"{p}_ns_stdev"] or 0) / 1000 for _, r in pp],
                            marker="o", capsize=3, label=drv, color=_color(drv, i))
            _log2_axis(ax, depths)
            _log_us_axis(ax)
            ax.set_xlabel("iodepth")
            ax.set_ylabel(f"{PCT_LABEL[p]} completion latency (µs)")
            ax.set_title(f"{PCT_LABEL[p]} clat", fontsize=11)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(f"{title} — completion latency", fontsize=11)
        names.append(_save(plt, fig, dest, "qd_sweep_latency.png"))
    return names


def plot_starvation(plt, rows, dest, title):
    series = _depth_series(rows, "starvation")
    if not series:
        return None
    depths = [d for v in series.values() for d, _ in v]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for i, (drv, pts) in enumerate(series.items()):
        c = _color(drv, i)
        a1.errorbar([d for d, _ in pts], [r["iops_mean"] for _, r in pts],
                    yerr=[r["iops_stdev"] for _, r in pts], marker="o", capsize=4,
                    label=drv, color=c)
        pp = [(d, r) for d, r in pts if r["ctx_per_io"] is not None]
        if pp:
            a2.errorbar([d for d, _ in pp], [r["ctx_per_io"] for _, r in pp],
                        yerr=[r["ctx_per_io_stdev"] or 0 for _, r in pp], marker="s",
                        capsize=4, label=drv, color=c)
    for ax in (a1, a2):
        _log2_axis(ax, depths)
        ax.set_xlabel("hw_queue_depth")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=9)
        ax.set_ylim(bottom=0)
    a1.set_ylabel("IOPS")
    _kfmt(a1)
    a1.set_title("IOPS", fontsize=11)
    a2.set_ylabel("context switches per I/O")
    a2.set_title("ctx / IO", fontsize=11)
    fig.suptitle(title, fontsize=11)
    return _save(plt, fig, dest, "starvation.png")


def plot_fairness(plt, rows, dest, title, meta):
    rs = [r for r in rows if r["scenario"] == "fairness"]
    if not rs:
        return None
    drv = ordered({r["driver"] for r in rs}, DRIVER_ORDER)[0]
    if len({r["driver"] for r in rs}) > 1:
        warn(f"fairness: several drivers; plotting {drv} only")
    rs = [r for r in rs if r["driver"] == drv]
    pols = ordered({r["variant"] for r in rs}, POLICY_ORDER)
    jobs = ordered({r["job"] for r in rs}, ["A", "B"])
    comp_us = num(dig(meta, "scenarios", "fairness", "completion_us"))
    limit_us = FAIRNESS_LAT_FACTOR * comp_us if comp_us is not None else None
    b_rows = [find_row(rs, "fairness", p, drv, "B") for p in pols]
    have_blat = any(r and r["lat_mean_ns"] is not None for r in b_rows)
    ncols = 2 if have_blat else 1
    fig, axes = plt.subplots(1, ncols, figsize=(max(6.5, 1.8 * len(pols) + 2) + 4.5 * (ncols - 1), 4.8),
                             squeeze=False, gridspec_kw={"width_ratios": [1.6, 1][:ncols]})
    ax = axes[0][0]
    width = 0.8 / max(1, len(jobs))
    ymax = max(r["iops_mean"] + r["iops_stdev"] for r in rs) or 1
    job_colors = {}
    for ji, job in enumerate(jobs):
        xs, ys, es, rr = [], [], [], []
        for pi, p in enumerate(pols):
            r = find_row(rs, "fairness", p, drv, job)
            if r:
                xs.append(pi - 0.4 + width * (ji + 0.5))
                ys.append(r["iops_mean"])
                es.append(r["iops_stdev"])
                rr.append(r)
        lab = {"A": "A (busy disk)", "B": "B (light disk)"}.get(job, job)
        color = ("#4c72b0", "#dd8452")[ji] if ji < 2 else EXTRA_COLORS[ji % len(EXTRA_COLORS)]
        job_colors[job] = color
        bars = ax.bar(xs, ys, width * 0.95, yerr=es, capsize=4, label=lab,
                      color=color, edgecolor="black", linewidth=0.5)
        if job == "B":
            for b, r in zip(bars, rr):
                txt = f"B {fmt_iops(r['iops_mean'])} IOPS"
                if r["lat_mean_ns"] is not None:
                    txt += f"\nlat {fmt_us(r['lat_mean_ns'])} µs"
                bad = (limit_us is not None and r["lat_mean_ns"] is not None
                       and r["lat_mean_ns"] > limit_us * 1000)
                ax.annotate(txt, (b.get_x() + b.get_width() / 2, b.get_height() + r["iops_stdev"]),
                            xytext=(0, 3), textcoords="offset points", ha="center",
                            va="bottom", fontsize=8, color="#b00000" if bad else "black")
    a_b = find_row(rs, "fairness", "borrow", drv, "A")
    a_f = find_row(rs, "fairness", "fair", drv, "A")
    if a_b and a_f:
        r, sp = ratio_spread(a_b["iops_mean"], a_b["iops_stdev"], a_f["iops_mean"], a_f["iops_stdev"])
        if r is not None:
            ax.text(0.02, 0.97, f"A borrow/fair = {fmt_ratio(r, sp)} (target ≥ {FAIRNESS_TARGET_RATIO})",
                    transform=ax.transAxes, va="top", fontsize=9,
                    bbox=dict(boxstyle="round", fc="white", alpha=0.8))
    ax.set_xticks(range(len(pols)))
    ax.set_xticklabels(pols)
    ax.set_xlabel("tag policy")
    ax.set_ylabel("IOPS")
    ax.set_ylim(0, ymax * 1.25)
    _kfmt(ax)
    ax.set_title(f"IOPS per job [{drv}]", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=9, loc="upper right")
    if have_blat:
        ax2 = axes[0][1]
        xs = [i for i, r in enumerate(b_rows) if r and r["lat_mean_ns"] is not None]
        ys = [b_rows[i]["lat_mean_ns"] / 1000 for i in xs]
        es = [(b_rows[i]["lat_mean_ns_stdev"] or 0) / 1000 for i in xs]
        cols = [("#b00000" if limit_us is not None and y > limit_us else job_colors.get("B", "#dd8452"))
                for y in ys]
        ax2.bar(xs, ys, 0.6, yerr=es, capsize=4, color=cols, edgecolor="black", linewidth=0.5)
        if limit_us is not None:
            ax2.axhline(limit_us, color="black", ls="--", lw=1,
                        label=f"limit {FAIRNESS_LAT_FACTOR:g} × {comp_us:g} µs")
            ax2.legend(fontsize=8, loc="upper right")
        ax2.set_xticks(range(len(pols)))
        ax2.set_xticklabels(pols)
        ax2.set_xlabel("tag policy")
        ax2.set_ylabel("B mean total latency (µs)")
        top = max(ys + ([limit_us] if limit_us else []))
        ax2.set_ylim(0, top * 1.2)
        ax2.set_title("light disk B: mean latency", fontsize=10)
        ax2.grid(axis="y", alpha=0.3)
    fig.suptitle(title, fontsize=11)
    return _save(plt, fig, dest, "fairness.png")


def plot_hotpath(plt, rows, dest, title):
    """Mean ± sd per variant as points on a zoomed axis (bars from 0 would
    hide differences of a few percent), with the tags-off band."""
    rs = [r for r in rows if r["scenario"] == "hotpath"]
    if not rs:
        return None
    drivers = ordered({r["driver"] for r in rs}, DRIVER_ORDER)
    variants = ordered({r["variant"] for r in rs}, VARIANT_ORDER["hotpath"])
    fig, ax = plt.subplots(figsize=(max(6.5, 1.3 * len(variants) + 2.5), 4.6))
    off = 0.12
    lo_all, hi_all = [], []
    for di, drv in enumerate(drivers):
        c = _color(drv, di)
        ref = find_row(rows, "hotpath", HOTPATH_REF_VARIANT, drv)
        if ref:
            lo, hi = ref["iops_mean"] - ref["iops_stdev"], ref["iops_mean"] + ref["iops_stdev"]
            ax.axhspan(lo, hi, color=c, alpha=0.12)
            ax.axhline(ref["iops_mean"], color=c, ls="--", lw=1,
                       label=f"{drv} {HOTPATH_REF_VARIANT} mean ± sd")
        pts = [(vi, find_row(rows, "hotpath", var, drv)) for vi, var in enumerate(variants)]
        pts = [(vi, r) for vi, r in pts if r]
        xs = [vi + (di - (len(drivers) - 1) / 2) * off for vi, _ in pts]
        ax.errorbar(xs, [r["iops_mean"] for _, r in pts], yerr=[r["iops_stdev"] for _, r in pts],
                    fmt="o", ms=7, capsize=5, color=c, label=drv)
        for x, (_, r) in zip(xs, pts):
            lo_all.append(r["iops_mean"] - r["iops_stdev"])
            hi_all.append(r["iops_mean"] + r["iops_stdev"])
            if r["ratio"] is not None and r["variant"] != HOTPATH_REF_VARIANT:
                ax.annotate(f"×{r['ratio']:.3f}±{r['ratio_spread']:.3f}",
                            (x, r["iops_mean"] + r["iops_stdev"]), xytext=(0, 4),
                            textcoords="offset points", ha="center", va="bottom", fontsize=8)
    lo, hi = min(lo_all), max(hi_all)
    pad = max((hi - lo) * 0.25, hi * 0.005)
    ax.set_ylim(lo - pad, hi + pad * 1.6)
    ax.set_xlim(-0.6, len(variants) - 0.4)
    ax.set_xticks(range(len(variants)))
    ax.set_xticklabels(variants)
    ax.set_xlabel("tag policy")
    ax.set_ylabel("IOPS (zoomed axis)")
    _kfmt(ax)
    ax.set_title(title, fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    return _save(plt, fig, dest, "hotpath.png")


def plot_slices(plt, rows, dest, title):
    # rnull's slices; the schedulers beside them are slicetable.plot's.
    rs = [r for r in rows if r["scenario"] == "slices" and r["driver"] == "rnull"]
    parsed = {}  # (driver, workload) -> ts -> [(nj, row)]
    for r in rs:
        m = SLICE_RE.match(r["variant"])
        if not m:
            warn(f"slices: variant {r['variant']!r} not <workload>-ts<us>-j<n>; not plotted")
            continue
        (parsed.setdefault((r["driver"], m["wl"]), {})
         .setdefault(int(m["ts"]), []).append((int(m["nj"]), r)))
    if not parsed:
        return None
    keys = sorted(parsed, key=lambda k: (DRIVER_ORDER.index(k[0]) if k[0] in DRIVER_ORDER else 9,
                                         SLICE_WORKLOADS.index(k[1])
                                         if k[1] in SLICE_WORKLOADS else 9, k[1]))
    fig, axes = plt.subplots(1, len(keys), figsize=(4.6 * len(keys) + 0.5, 4.4), squeeze=False)
    all_ts = sorted({ts for v in parsed.values() for ts in v})
    cmap = plt.get_cmap("viridis")
    for ax, key in zip(axes[0], keys):
        for ts, pts in sorted(parsed[key].items()):
            pts.sort(key=lambda x: x[0])
            ci = all_ts.index(ts) / max(1, len(all_ts) - 1)
            ax.errorbar([n for n, _ in pts], [r["iops_mean"] for _, r in pts],
                        yerr=[r["iops_stdev"] for _, r in pts], marker="o", capsize=3,
                        label=f"time_slice {ts} µs", color=cmap(ci * 0.9))
        njs = sorted({n for v in parsed[key].values() for n, _ in v})
        ax.set_xticks(njs)
        ax.set_xlabel("numjobs")
        ax.set_ylabel("IOPS")
        ax.set_ylim(bottom=0)
        _kfmt(ax)
        drv, wl = key
        ax.set_title(wl if len({k[0] for k in keys}) == 1 else f"{wl} [{drv}]", fontsize=11)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    return _save(plt, fig, dest, "slices.png")


def plot_policies(plt, rows, dest, title):
    """The `policies` table as six panels, one per sub-scenario's figure of
    merit, policies along x: Kuai's busy IOPS, Busch's light/solo, Axboe's
    split, block/035 and the three latencies (IOPS per device, log), and
    the slow hand-offs."""
    cells = policy_cells(rows)
    if not cells:
        return None
    pols = ordered({c["policy"] for c in cells}, POLICY_ORDER)
    x = range(len(pols))
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.4))
    (a_kuai, a_busch, a_split), (a_035, a_lat, a_hand) = axes

    def bars(ax, vals, color, ylabel, fmt):
        xs = [i for i, v in enumerate(vals) if v is not None]
        ax.bar(xs, [vals[i] for i in xs], 0.6, color=color, edgecolor="black", linewidth=0.5)
        for i in xs:
            ax.annotate(fmt(vals[i]), (i, vals[i]), xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", fontsize=8)
        ax.set_ylabel(ylabel)

    def per_job(ax, sub):
        cs = [find_cell(cells, sub, p) for p in pols]
        jobs = ordered({j for c in cs if c for j in c["jobs"]},
                       ["fast", "slow", "100us", "1ms", "10ms"])
        w = 0.8 / max(1, len(jobs))
        for ji, j in enumerate(jobs):
            xs = [i for i, c in enumerate(cs) if c and c["jobs"].get(j)]
            ax.bar([i - 0.4 + w * (ji + 0.5) for i in xs], [cs[i]["jobs"][j] for i in xs],
                   w * 0.95, label=j, color=EXTRA_COLORS[ji % len(EXTRA_COLORS)],
                   edgecolor="black", linewidth=0.5)
        if jobs:
            ax.set_yscale("log")
            # Room above the bars for the legend.
            top = max(v for c in cs if c for v in c["jobs"].values())
            ax.set_ylim(top=top * 6)
            ax.legend(fontsize=8, ncol=len(jobs), loc="upper center")
        ax.set_ylabel("IOPS (log)")

    def cell_vals(sub, key):
        return [(find_cell(cells, sub, p) or {}).get(key) for p in pols]

    bars(a_kuai, cell_vals("kuai", "busy_iops"), "#4c72b0", "busy IOPS", fmt_iops)
    _kfmt(a_kuai)
    bars(a_busch, cell_vals("busch", "light_vs_solo"), "#dd8452", "light IOPS / solo",
         lambda v: f"{v:.3f}")
    a_busch.axhline(BUSCH_KEEP_FLOOR, color="green", ls="--", lw=1,
                    label=f"keeps ≥ {BUSCH_KEEP_FLOOR}")
    a_busch.axhline(BUSCH_LOSE_CEILING, color="#b00000", ls=":", lw=1,
                    label=f"loses ≤ {BUSCH_LOSE_CEILING}")
    a_busch.set_ylim(0, 1.15)
    a_busch.legend(fontsize=8, loc="lower right")
    bars(a_split, cell_vals("qd32_split", "split"), "#55a868", "bandwidth min/max",
         lambda v: f"{v:.3f}")
    a_split.axhline(SPLIT_FLOOR, color="green", ls="--", lw=1, label=f"target ≥ {SPLIT_FLOOR}")
    a_split.set_ylim(0, 1.15)
    a_split.legend(fontsize=8, loc="lower right")
    per_job(a_035, "block035")
    per_job(a_lat, "latencies")
    subs = ordered({c["sub"] for c in cells}, POLICIES_SUBS)
    w = 0.8 / max(1, len(subs))
    for si, sub in enumerate(subs):
        vals = cell_vals(sub, "slow_handoffs")
        xs = [i for i, v in enumerate(vals) if v is not None]
        a_hand.bar([i - 0.4 + w * (si + 0.5) for i in xs], [vals[i] for i in xs], w * 0.95,
                   label=sub, color=EXTRA_COLORS[si % len(EXTRA_COLORS)],
                   edgecolor="black", linewidth=0.5)
    a_hand.set_ylabel("slow hand-offs (≥ 1 ms)")
    a_hand.legend(fontsize=7, ncol=2)
    for ax, sub in ((a_kuai, "kuai"), (a_busch, "busch"), (a_split, "qd32_split"),
                    (a_035, "block035"), (a_lat, "latencies"), (a_hand, None)):
        ax.set_xticks(list(x))
        ax.set_xticklabels(pols)
        ax.set_title(SUB_LABEL.get(sub, sub) if sub else "slow hand-offs per run (target 0)",
                     fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title, fontsize=11)
    return _save(plt, fig, dest, "policies.png")


def plot_policy_switch(plt, tls, dest, title):
    """One panel per (timeline, job), stacked with a shared time axis, so a
    light job is not flattened by a busy one."""
    panels = [(tl, job) for tl in tls for job in tl.series]
    if not panels:
        return None
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 1.2 + 2.6 * len(panels)),
                             squeeze=False, sharex=True)
    for pi, (ax, (tl, job)) in enumerate(zip(axes[:, 0], panels)):
        ts, vs = tl.series[job]
        ji = list(tl.series).index(job)
        ax.plot([t / 1000 for t in ts], vs, lw=1.4, marker=".", ms=3,
                color=("#4c72b0", "#dd8452")[ji] if ji < 2 else EXTRA_COLORS[ji % len(EXTRA_COLORS)])
        ymax = max(vs) or 1
        ax.set_ylim(0, ymax * 1.25)
        for t, pol in tl.switches:
            ax.axvline(t / 1000, color="black", ls="--", lw=1, alpha=0.7)
            if pi == 0 or panels[pi - 1][0] is not tl:
                ax.text(t / 1000, ymax * 1.22, f" {pol}", va="top", ha="left", fontsize=9,
                        bbox=dict(boxstyle="round,pad=0.2", fc="white", alpha=0.85))
        lab = {"A": "A (busy)", "B": "B (light)"}.get(job, job)
        ax.set_ylabel(f"{lab}\nIOPS")
        _kfmt(ax)
        ax.grid(alpha=0.3)
        if len(tls) > 1:
            ax.set_title(f"{tl.driver}/{tl.variant}: job {job}", fontsize=9, loc="left")
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(title, fontsize=11)
    return _save(plt, fig, dest, "policy_switch.png")




def plot_peak_matrix(plt, cells, dest, title, clock):
    """rnull/null_blk (and rnull_mod/null_blk) per variant, one panel per
    boot; error bars: the 95 % CI (wall clock) or the per-round min–max
    (virtual clock). Host-budget rows also show their cost against the
    reference variant (diamonds)."""
    boots = {}
    for c in cells:
        boots.setdefault(c["cpus"], []).append(c)
    if not boots:
        return None
    nvar = max(len(v) for v in boots.values())
    fig, axes = plt.subplots(len(boots), 1, figsize=(max(8.0, 0.55 * nvar + 3), 3.8 * len(boots)),
                             squeeze=False)
    lo_key, hi_key = ("rmin", "rmax") if clock == VIRTUAL else ("ci_lo", "ci_hi")
    series = [("rnull_vs_null_blk", "rnull / null_blk", DRIVER_COLORS["rnull"]),
              ("rnull_mod_vs_null_blk", "rnull_mod / null_blk", DRIVER_COLORS["rnull_mod"])]
    for ax, (cpus, cs) in zip(axes[:, 0], boots.items()):
        vals = [PEAK_AHEAD_RATIO, HOST_COST_FLOOR]
        width = 0.8 / len(series)
        for si, (key, label, color) in enumerate(series):
            pts = [(i, c[key]) for i, c in enumerate(cs) if c[key] and c[key]["ratio"] is not None]
            if not pts:
                continue
            xs = [i - 0.4 + width * (si + 0.5) for i, _ in pts]
            ys = [st["ratio"] for _, st in pts]
            err = [[max(0.0, st["ratio"] - (st[lo_key] if st[lo_key] is not None else st["ratio"]))
                    for _, st in pts],
                   [max(0.0, (st[hi_key] if st[hi_key] is not None else st["ratio"]) - st["ratio"])
                    for _, st in pts]]
            # bars grow from 1: up is ahead, down is behind
            ax.bar(xs, [y - PEAK_AHEAD_RATIO for y in ys], width * 0.95, bottom=PEAK_AHEAD_RATIO,
                   yerr=err, capsize=3, color=color, label=label, edgecolor="black",
                   linewidth=0.5)
            vals += [y - e for y, e in zip(ys, err[0])] + [y + e for y, e in zip(ys, err[1])]
        cost = [(i, c["cost_vs_ref"]["ratio"]) for i, c in enumerate(cs)
                if c["cost_vs_ref"] and c["cost_vs_ref"]["ratio"] is not None]
        if cost:
            ax.plot([i for i, _ in cost], [y for _, y in cost], "D", color="#d62728", ms=6,
                    label="rnull / rnull ref (cost)")
            vals += [y for _, y in cost]
        ax.axhline(PEAK_AHEAD_RATIO, color="black", lw=1)
        ax.axhline(HOST_COST_FLOOR, color="#d62728", lw=0.8, ls="--",
                   label=f"host cost floor {HOST_COST_FLOOR:g}")
        lo, hi = min(vals), max(vals)
        pad = max((hi - lo) * 0.15, 0.01)
        ax.set_ylim(max(0.0, lo - pad), hi + pad)
        ax.set_xticks(range(len(cs)))
        ax.set_xticklabels([c["variant"] for c in cs], rotation=45, ha="right", fontsize=8)
        ax.set_ylabel("ratio")
        ax.set_title(f"{cpus} vCPU", fontsize=10, loc="left")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    bars = "per-round min–max" if clock == VIRTUAL else "95% CI"
    fig.suptitle(f"{title}\n{clock} clock; error bars: {bars}", fontsize=10)
    return _save(plt, fig, dest, "peak.png")


def make_plots(rows, tls, meta, outdir, clock, verd=None, matrix=(),
               boots=()) -> dict[str, list[str]]:
    """{scenario: [png names]}; {} without matplotlib."""
    verd = verd or {}
    plt = _plt()
    if plt is None:
        return {}
    out: dict[str, list[str]] = {}

    def add(scen, fn):
        try:
            res = fn()
        except Exception as e:  # never let one plot kill the report
            warn(f"{scen}: plot failed: {type(e).__name__}: {e}")
            plt.close("all")
            return
        if isinstance(res, str):
            res = [res]
        if res:
            out.setdefault(scen, []).extend(res)

    if matrix:
        add("peak", lambda: plot_peak_matrix(plt, matrix, Dest(outdir),
                                             scenario_title(meta, "peak"), clock))
        rows = [r for r in rows if r["scenario"] != "peak"]
    groups = by_cpus(rows)
    for cpus, rs in groups.items():
        multi = len(groups) > 1
        dest = Dest(outdir, f"_c{cpus}" if multi else "")
        bv = {s: [v for v in vs if v.get("cpus", cpus) == cpus] for s, vs in verd.items()}
        for scen in ordered({r["scenario"] for r in rs}, SCENARIO_ORDER):
            if scen == "policy_switch" and tls:
                continue  # the timeline plot below
            t = scenario_title(meta, scen) + (f" [{cpus} vCPU]" if multi else "")
            _scenario_plot(plt, add, scen, rs, dest, t, meta, bv, boots)
    if tls:
        add("policy_switch", lambda: plot_policy_switch(
            plt, tls, Dest(outdir), scenario_title(meta, "policy_switch")))
    return out


def _scenario_plot(plt, add, scen, rows, dest, t, meta, verd, boots=()):
    if scen == "qd_sweep":
        add(scen, lambda: plot_qd_sweep(plt, rows, dest, t))
    elif scen == "starvation":
        add(scen, lambda: plot_starvation(plt, rows, dest, t))
    elif scen == "fairness":
        add(scen, lambda: plot_fairness(plt, rows, dest, t, meta))
    elif scen == "block035":
        notes = {v["policy"]: ("fast ≥ slow ✓", "#2a7d2a") if v["pass"] else
                 ("undecided", "#777777") if v["pass"] is None else ("fast < slow ✗", "#b00000")
                 for v in verd.get("block035", []) if v["driver"] == "rnull"}
        add(scen, lambda: plot_grouped_bars(
            plt, rows, scen, dest, t, series_key="job", groups_order=POLICY_ORDER,
            series_order=["fast", "slow"], annotate_ratio=False, notes=notes))
    elif scen == "hotpath":
        add(scen, lambda: plot_hotpath(plt, rows, dest, t))
    elif scen == "slices":
        add(scen, lambda: plot_slices(plt, rows, dest, t))
        add(scen, lambda: _save_fig(plt, slicetable.plot(plt, rows, t, slicetable.read_stats(
            [b for b in boots if b.cpus in (None, rows[0]["cpus"])])), dest, "slice_table.png"))
    elif scen == "policies":
        add(scen, lambda: plot_policies(plt, rows, dest, t))
    elif scen in PER_JOB_SCENARIOS:
        pass
    else:  # peak (old layout), shared_tags, memory and unknown scenarios
        add(scen, lambda: plot_grouped_bars(
            plt, rows, scen, dest, t, groups_order=VARIANT_ORDER.get(scen, ())))
