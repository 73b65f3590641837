"""Verdicts: the scenarios' targets (thresholds.py) checked on the rows.

Each verdict is a dict with at least "check" and "text"; those with "pass"
count in the report's verdict summary. A comparison against a target uses
the clock's statistics (classify): on the virtual clock the ratio of means,
on the wall clock its 95 % confidence interval.

A figure of fio's IOPS has a resolution (parse.iops_step: whole I/Os over
whole milliseconds), and so has a ratio of such figures (rows.ratio_res).
A verdict whose figure lies closer to its target than that is undecided
("pass": None, "undecided": True): the run was too short to tell.
"""

from __future__ import annotations

from clocks import VIRTUAL
from common import dig, natural_key, num, ordered, warn
from fmt import fmt_cmp, fmt_iops, fmt_mibs, fmt_ratio, fmt_us
from bindtable import bind_cells
from names import (AHEAD_SCENARIOS, BIND_REF_VARIANT, DRIVER_ORDER, HOTPATH_REF_VARIANT,
                   POLICIES_SUBS, POLICY_ORDER, REF_DRIVER)
from policies import SUB_LABEL, find_cell, policy_cells
from rows import by_cpus, by_scenario, find_row, ratio_res, row_cmp, row_ratio, slice_cells
from stats import ratio_spread
from thresholds import (BUSCH_KEEP_FLOOR, BUSCH_KEEP_POLICIES, BUSCH_LOSE_CEILING,
                        BUSCH_LOSE_POLICIES, CONFIDENCE, FAIRNESS_LAT_FACTOR,
                        FAIRNESS_TARGET_RATIO, HOST_COST_FLOOR, PEAK_AHEAD_RATIO,
                        SLICE_CFQ_TARGET, SLICE_GAIN_TARGET, SLICE_GAIN_TS, SLICE_LOSS_FLOOR,
                        SLOW_HANDOFFS_MAX, SPLIT_EXEMPT_POLICIES, SPLIT_FLOOR,
                        VIRTUAL_EQUAL_REL)

CI_PCT = f"{CONFIDENCE * 100:g}%"
SCEN_POLICIES = "policies"


def fmt_res(res) -> str:
    return f"{res:.4f}" if res >= 1e-4 else f"{res:.1e}"


def undecided_word(res) -> str:
    return f"undecided: run too short (resolution {fmt_res(res)})"


def within_res(value, target, res) -> bool:
    """Whether value lies closer to target than its resolution res."""
    return res is not None and value is not None and abs(value - target) < res


def classify(st: dict, clock: str, floor: float):
    """Where a ratio_stats dict lies against `floor`: "above" (≥ floor),
    "below", on the wall clock "straddles" when its CI contains floor, or
    "undecided" when the ratio of means decides and lies closer to floor
    than its resolution (st["res"]). Without a CI (fewer than two rounds)
    the ratio of means decides."""
    r = st.get("ratio") if st else None
    if r is None:
        return None
    if clock == VIRTUAL or st.get("ci_lo") is None:
        if within_res(r, floor, st.get("res")):
            return "undecided"
        return "above" if r >= floor else "below"
    if st["ci_lo"] >= floor:
        return "above"
    if st["ci_hi"] < floor:
        return "below"
    return "straddles"


def _target(clock, st, floor):
    if clock == VIRTUAL or st.get("ci_lo") is None:
        note = "" if clock == VIRTUAL else ", no CI: fewer than 2 rounds"
        return f"target ≥ {floor:.2f}{note}"
    return f"target: {CI_PCT} CI ≥ {floor:.2f}"


def pass_fail(check, ok, text, **kw):
    """A verdict entry whose text ends in PASS or FAIL."""
    return {"check": check, "pass": ok,
            "text": f"{text} → **{'PASS' if ok else 'FAIL'}**", **kw}


def undecided(check, res, text, **kw):
    """A verdict entry too close to its target for its figure's resolution."""
    return {"check": check, "pass": None, "undecided": True, "resolution": res,
            "text": f"{text} → **{undecided_word(res)}**", **kw}


def judge(check, figure, goal, res, text, at_most=False, **kw):
    """figure ≥ goal (≤ with at_most): PASS or FAIL, or undecided when
    the figure lies closer to goal than its resolution res."""
    if within_res(figure, goal, res):
        return undecided(check, res, text, **kw)
    return pass_fail(check, figure <= goal if at_most else figure >= goal, text, **kw)


def target_verdict(check, st, clock, floor, what, words, **kw):
    """A verdict on `what` = ratio against a floor; words maps classify()'s
    outcome to the text's last word. Passes when "above"."""
    c = classify(st, clock, floor)
    word = undecided_word(st["res"]) if c == "undecided" else words[c]
    out = {"check": check, "pass": None if c == "undecided" else c == "above",
           "outcome": c if c == "undecided" else words[c],
           "value": st["ratio"], "ci_lo": st.get("ci_lo"), "ci_hi": st.get("ci_hi"),
           "p": st.get("p"), "target": floor, "resolution": st.get("res"),
           "text": f"{what} = {fmt_cmp(st, clock)} ({_target(clock, st, floor)}) → **{word}**",
           **kw}
    if c == "undecided":
        out["undecided"] = True
    return out


def diff_verdict(r, ref, clock) -> dict:
    """Row r against row ref, two-sided: on the virtual clock the relative
    difference ("equal" below VIRTUAL_EQUAL_REL), on the wall clock the
    ratio's CI against 1."""
    st = row_ratio(r, ref)
    diff = r["iops_mean"] - ref["iops_mean"]
    pct = 100 * diff / ref["iops_mean"] if ref["iops_mean"] else float("nan")
    out = {"diff": diff, "diff_pct": pct, "ratio": st["ratio"], "ci_lo": st["ci_lo"],
           "ci_hi": st["ci_hi"], "p": st["p"]}
    if clock == VIRTUAL:
        rel = (st["ratio"] or 1.0) - 1.0
        if within_res(abs(rel), VIRTUAL_EQUAL_REL, st.get("res")):
            out["outcome"] = "undecided"
            out["text"] = f"{pct:+.2f}% (ratio {fmt_cmp(st, clock)}) → {undecided_word(st['res'])}"
            return out
        if abs(rel) < VIRTUAL_EQUAL_REL:
            out["outcome"], word = "equal", f"equal within {VIRTUAL_EQUAL_REL:.1%}"
        else:
            out["outcome"] = "higher" if rel > 0 else "lower"
            word = f"{out['outcome']} by {abs(rel):.2%}"
        out["text"] = f"{pct:+.2f}% (ratio {fmt_cmp(st, clock)}) → {word}"
        return out
    c = classify(st, clock, 1.0)
    out["outcome"], word = {
        "above": ("higher", f"higher ({CI_PCT} CI above 1)"),
        "below": ("lower", f"lower ({CI_PCT} CI below 1)"),
        "straddles": ("indistinguishable", f"no difference resolved ({CI_PCT} CI contains 1)"),
    }[c]
    out["text"] = f"{diff:+,.0f} IOPS ({pct:+.1f}%), ratio {fmt_cmp(st, clock)} → {word}"
    return out


# --------------------------------------------------------------------------

def verdicts(rows: list[dict], meta: dict, clock: str, matrix=()) -> dict:
    """{scenario: [verdict]} for all boots; with several boots each text
    starts with the boot's vCPU count."""
    out: dict[str, list[dict]] = {}
    groups = by_cpus(rows)
    for cpus, rs in groups.items():
        for scen, vs in boot_verdicts(rs, meta, clock).items():
            for v in vs:
                v["cpus"] = cpus
                if len(groups) > 1:
                    v["text"] = f"c{cpus}: {v['text']}"
            out.setdefault(scen, []).extend(vs)
    if matrix:
        out["peak"] = peak_verdicts(matrix, clock)
    return out


def boot_verdicts(rows: list[dict], meta: dict, clock: str) -> dict:
    """The verdicts of one boot's rows (except the peak matrix)."""
    out: dict[str, list[dict]] = {}
    scen_rows = by_scenario(rows)
    if "fairness" in scen_rows:
        out["fairness"] = fairness_verdicts(rows, scen_rows["fairness"], meta)
    if "block035" in scen_rows:
        out["block035"] = block035_verdicts(rows, scen_rows["block035"])
    if "policies" in scen_rows:
        out["policies"] = policies_verdicts(policy_cells(scen_rows["policies"]),
                                            scen_rows["policies"])
    if "hotpath" in scen_rows:
        out["hotpath"] = hotpath_verdicts(rows, scen_rows["hotpath"], clock)
    if "slice_cost" in scen_rows:
        out["slice_cost"] = slice_cost_verdicts(rows, scen_rows["slice_cost"], clock)
    if "slices" in scen_rows:
        out["slices"] = slice_verdicts(scen_rows["slices"])
    for scen in AHEAD_SCENARIOS:
        if scen in scen_rows:
            out[scen] = ahead_verdicts(scen_rows[scen], clock)
    if "bind_tags" in scen_rows:
        out["bind_tags"] = bind_verdicts(bind_cells(scen_rows["bind_tags"]), clock)
    if "slice_single" in scen_rows:
        out["slice_single"] = [
            judge("single_job", r["ratio"], SLICE_LOSS_FLOOR, r.get("ratio_res"),
                  f"{r['variant']} / ts0 = {fmt_ratio(r['ratio'], r['ratio_spread'])} "
                  f"(target ≥ {SLICE_LOSS_FLOOR})", variant=r["variant"], value=r["ratio"])
            for r in scen_rows["slice_single"]
            if r["ratio"] is not None and not r["variant"].endswith("-ts0")]
    return out


def fairness_verdicts(rows, rs, meta):
    """A(borrow)/A(fair) >= 1.8, B mean latency <= 2x completion."""
    v = []
    drivers = ordered({r["driver"] for r in rs}, DRIVER_ORDER)
    comp_us = num(dig(meta, "scenarios", "fairness", "completion_us"))
    if comp_us is None:
        warn("meta.json: scenarios.fairness.completion_us missing; "
             "skipping B latency verdict")
    for drv in drivers:
        a_b = find_row(rows, "fairness", "borrow", drv, "A")
        a_f = find_row(rows, "fairness", "fair", drv, "A")
        if a_b and a_f:
            r, sp = ratio_spread(a_b["iops_mean"], a_b["iops_stdev"],
                                 a_f["iops_mean"], a_f["iops_stdev"])
            what = f"{drv}: A IOPS borrow/fair = {fmt_ratio(r, sp)} (target ≥ {FAIRNESS_TARGET_RATIO})"
            kw = dict(driver=drv, value=r, spread=sp, target=FAIRNESS_TARGET_RATIO)
            v.append(pass_fail("A_borrow_over_fair", False, what, **kw) if r is None else
                     judge("A_borrow_over_fair", r, FAIRNESS_TARGET_RATIO,
                           ratio_res(r, a_b, a_f), what, **kw))
        else:
            warn(f"fairness/{drv}: need job A under both 'borrow' and 'fair'")
        if comp_us is None:
            continue
        limit_ns = FAIRNESS_LAT_FACTOR * comp_us * 1000
        for r in rs:
            if r["driver"] != drv or r["job"] != "B":
                continue
            lat = r["lat_mean_ns"]
            if lat is None:
                warn(f"fairness/{r['variant']}/{drv}: B has no lat_ns.mean")
                continue
            v.append(pass_fail("B_latency", lat <= limit_ns,
                               f"{drv}/{r['variant']}: B mean latency "
                               f"{fmt_us(lat)} µs vs limit {fmt_us(limit_ns)} µs "
                               f"({FAIRNESS_LAT_FACTOR:g} × {comp_us:g} µs completion)",
                               driver=drv, policy=r["variant"], value=lat, limit=limit_ns))
    return v


def block035_verdicts(rows, rs):
    """fast >= slow per policy."""
    v = []
    seen = {(r["variant"], r["driver"]) for r in rs}
    for var, drv in sorted(seen, key=lambda x: (
            POLICY_ORDER.index(x[0]) if x[0] in POLICY_ORDER else 99,
            natural_key(x[0]), natural_key(x[1]))):
        f = find_row(rows, "block035", var, drv, "fast")
        s = find_row(rows, "block035", var, drv, "slow")
        if not (f and s):
            warn(f"block035/{var}/{drv}: need jobs 'fast' and 'slow'")
            continue
        ok = f["iops_mean"] >= s["iops_mean"]
        v.append(fast_slow_verdict("fast_ge_slow", f["iops_mean"], s["iops_mean"],
                                   ratio_res(1.0, f, s),
                                   f"{drv}/{var}: fast {fmt_iops(f['iops_mean'])} "
                                   f"{'≥' if ok else '<'} slow {fmt_iops(s['iops_mean'])}",
                                   driver=drv, policy=var))
    return v


def fast_slow_verdict(check, fast, slow, rel_res, text, **kw):
    """fast ≥ slow, judged as fast / slow ≥ 1; rel_res is the ratio's
    relative resolution."""
    r = fast / slow if slow else float("inf")
    res = None if rel_res is None or not slow else r * rel_res
    return judge(check, r, 1.0, res, text, fast=fast, slow=slow, **kw)


def policies_verdicts(cells, rows=()):
    """The issue's targets on the `policies` table (one boot's cells):
    Kuai's busy device borrow/fair, Busch's light job against its solo
    IOPS, Axboe's bandwidth split, block/035's fast >= slow, and no slow
    hand-offs. Means decide (each a ratio of means over the rounds); rows,
    the boot's rows, give the figures' resolutions."""
    v = []

    def check(name, ok, text, **kw):
        v.append(pass_fail(name, ok, text, **kw))

    def row(sub, pol, job):
        return find_row(rows, SCEN_POLICIES, f"{sub}-{pol}", "rnull", job)

    def pols(sub):
        return ordered({c["policy"] for c in cells if c["sub"] == sub}, POLICY_ORDER)

    b, f = find_cell(cells, "kuai", "borrow"), find_cell(cells, "kuai", "fair")
    if b and f and b["busy_iops"] is not None and f["busy_iops"]:
        r = b["busy_iops"] / f["busy_iops"]
        res = ratio_res(r, row("kuai", "borrow", b["busy_job"]), row("kuai", "fair", f["busy_job"]))
        v.append(judge("kuai_borrow_over_fair", r, FAIRNESS_TARGET_RATIO, res,
                       f"Kuai: busy IOPS borrow / fair = {fmt_iops(b['busy_iops'])} / "
                       f"{fmt_iops(f['busy_iops'])} = {r:.3f} (target ≥ {FAIRNESS_TARGET_RATIO})",
                       sub="kuai", value=r, target=FAIRNESS_TARGET_RATIO))
    elif any(c["sub"] == "kuai" for c in cells):
        warn("policies/kuai: need the busy job under both 'borrow' and 'fair'")
    for pol in pols("busch"):
        c = find_cell(cells, "busch", pol)
        r = c["light_vs_solo"]
        if r is None:
            continue
        what = (f"Busch/{pol}: light IOPS / solo = {fmt_iops(c['light_iops'])} / "
                f"{fmt_iops(c['solo_iops'])} = {r:.3f}")
        res = ratio_res(r, row("busch", pol, c["light_job"]), row("qd1_alone", pol, c["light_job"]))
        if pol in BUSCH_KEEP_POLICIES:
            v.append(judge("busch_keeps", r, BUSCH_KEEP_FLOOR, res,
                           f"{what} (target ≥ {BUSCH_KEEP_FLOOR})",
                           sub="busch", policy=pol, value=r, target=BUSCH_KEEP_FLOOR))
        elif pol in BUSCH_LOSE_POLICIES:
            v.append(judge("busch_loses", r, BUSCH_LOSE_CEILING, res,
                           f"{what} (must visibly lose: ≤ {BUSCH_LOSE_CEILING})", at_most=True,
                           sub="busch", policy=pol, value=r, target=BUSCH_LOSE_CEILING))
        else:
            v.append({"check": "busch_info", "sub": "busch", "policy": pol, "value": r,
                      "text": f"{what} (no target for {pol})"})
    for pol in pols("qd32_split"):
        c = find_cell(cells, "qd32_split", pol)
        if c["split"] is None:
            continue
        a, bb = c["split_jobs"]
        what = (f"Axboe b/{pol}: bandwidth {a} {fmt_mibs(c['bw'][a])} / {bb} "
                f"{fmt_mibs(c['bw'][bb])} MiB/s, min/max = {c['split']:.3f}")
        if pol in SPLIT_EXEMPT_POLICIES:
            v.append({"check": "split_info", "sub": "qd32_split", "policy": pol,
                      "value": c["split"], "text": f"{what} (no target for {pol})"})
        else:
            res = ratio_res(c["split"], row("qd32_split", pol, a), row("qd32_split", pol, bb))
            v.append(judge("split_even", c["split"], SPLIT_FLOOR, res,
                           f"{what} (target ≥ {SPLIT_FLOOR})",
                           sub="qd32_split", policy=pol, value=c["split"], target=SPLIT_FLOOR))
    for pol in pols("block035"):
        c = find_cell(cells, "block035", pol)
        fast, slow = c["jobs"].get("fast"), c["jobs"].get("slow")
        if fast is None or slow is None:
            warn(f"policies/block035-{pol}: need jobs 'fast' and 'slow'")
            continue
        ok = fast >= slow
        rel = ratio_res(1.0, row("block035", pol, "fast"), row("block035", pol, "slow"))
        v.append(fast_slow_verdict(
            "block035_fast_ge_slow", fast, slow, rel,
            f"block/035/{pol}: fast {fmt_iops(fast)} {'≥' if ok else '<'} slow {fmt_iops(slow)}",
            sub="block035", policy=pol))
    subs = ordered({c["sub"] for c in cells}, POLICIES_SUBS)
    for sub in subs:
        counted = [c for c in cells if c["sub"] == sub and c["slow_handoffs"] is not None]
        if not counted:
            continue
        ok = all(c["slow_handoffs_max"] <= SLOW_HANDOFFS_MAX for c in counted)
        per = ", ".join(f"{c['policy']} {c['slow_handoffs']}" for c in counted)
        # The whole runs (fio's start and end included), where they differ.
        runs = {c["policy"]: c.get("slow_handoffs_run") for c in counted}
        whole = ""
        if any(r is not None and r != c["slow_handoffs"] for c, r in zip(counted, runs.values())):
            whole = "; whole runs: " + ", ".join(
                f"{p} {'–' if r is None else r}" for p, r in runs.items())
        check("slow_handoffs", ok,
              f"{SUB_LABEL.get(sub, sub)}: slow hand-offs while I/O runs {per} (target: at most "
              f"{SLOW_HANDOFFS_MAX} in every run){whole}", sub=sub,
              counts={c["policy"]: c["slow_handoffs"] for c in counted}, runs=runs)
        # The target counts every hand-off: judged on its own, so
        # that a run whose edges are slow does not read as passed.
        whole_runs = {p: r for p, r in runs.items() if r is not None}
        if whole_runs:
            ok_run = all(r <= SLOW_HANDOFFS_MAX for r in whole_runs.values())
            check("slow_handoffs_whole_run", ok_run,
                  f"{SUB_LABEL.get(sub, sub)}: slow hand-offs over the whole runs, fio's start "
                  f"and end included: " + ", ".join(f"{p} {r}" for p, r in whole_runs.items())
                  + f" (target: at most {SLOW_HANDOFFS_MAX})", sub=sub, runs=whole_runs)
    return v


def hotpath_verdicts(rows, rs, clock):
    """Each tag policy against tags-off of the same driver."""
    v = []
    for r in rs:
        if r["variant"] == HOTPATH_REF_VARIANT:
            continue
        ref = find_row(rows, "hotpath", HOTPATH_REF_VARIANT, r["driver"], r["job"])
        if ref is None:
            warn(f"hotpath/{r['driver']}: no '{HOTPATH_REF_VARIANT}' reference")
            continue
        d = diff_verdict(r, ref, clock)
        d["text"] = f"{r['driver']}/{r['variant']} vs {HOTPATH_REF_VARIANT}: {d['text']}"
        v.append({"check": "vs_tags_off", "driver": r["driver"], "variant": r["variant"], **d})
    return v


def slice_cost_verdicts(rows, rs, clock):
    """ts250 vs ts0 with the model off."""
    v = []
    for r in rs:
        if r["driver"] != "rnull" or r["variant"].endswith("-ts0") or r["ratio"] is None:
            continue
        qd = r["variant"].split("-")[0]
        ref = find_row(rows, "slice_cost", f"{qd}-ts0", "rnull")
        d = diff_verdict(r, ref, clock)
        nb = find_row(rows, "slice_cost", f"{qd}-null_blk", "null_blk")
        vs_c = f"; rnull ts0 / null_blk = {fmt_cmp(row_ratio(ref, nb), clock)}" if nb else ""
        d["text"] = f"{r['variant']} vs {qd}-ts0: {d['text']}{vs_c}"
        v.append({"check": "vs_ts0", "variant": r["variant"], **d})
    return v


def slice_verdicts(rs):
    """The issue's targets on Herrmann's table (driver rnull)."""
    cells = slice_cells(rs)
    if not cells:
        return []
    v = []

    def check(name, r, floor, text, **kw):
        v.append(judge(name, r["ratio"], floor, r.get("ratio_res"), text, **kw))

    max_nj = max(nj for _, _, nj in cells)
    slices = sorted({ts for _, ts, _ in cells if ts})
    for wl in ("seqread", "seqwrite"):
        # Herrmann's gain is for reads: a write-through drive waits a
        # revolution for every sequential write, slice or not.
        r = cells.get((wl, SLICE_GAIN_TS, max_nj)) if wl == "seqread" else None
        if r and r["ratio"] is not None:
            check("gain", r, SLICE_GAIN_TARGET,
                  f"{wl}, {max_nj} jobs: ts{SLICE_GAIN_TS} / ts0 = "
                  f"{fmt_ratio(r['ratio'], r['ratio_spread'])} (target ≥ {SLICE_GAIN_TARGET})",
                  workload=wl, value=r["ratio"])
        for ts in slices:
            r = cells.get((wl, ts, 1))
            if r and r["ratio"] is not None:
                check("single_job", r, SLICE_LOSS_FLOOR,
                      f"{wl}, 1 job: ts{ts} / ts0 = {fmt_ratio(r['ratio'], r['ratio_spread'])}"
                      f" (target ≥ {SLICE_LOSS_FLOOR})", workload=wl, ts=ts, value=r["ratio"])
    for ts in slices:
        for nj in sorted({nj for w, t, nj in cells if w == "randread" and t == ts}):
            r = cells[("randread", ts, nj)]
            if r["ratio"] is not None:
                check("random", r, SLICE_LOSS_FLOOR,
                      f"randread, {nj} jobs: ts{ts} / ts0 = "
                      f"{fmt_ratio(r['ratio'], r['ratio_spread'])} (target ≥ {SLICE_LOSS_FLOOR})",
                      ts=ts, jobs=nj, value=r["ratio"])
    one = cells.get(("seqread", 0, 1))
    many = [(cells[("seqread", ts, max_nj)], ts) for ts in slices if ("seqread", ts, max_nj) in cells]
    if one and many:
        best, ts = max(many, key=lambda x: x[0]["iops_mean"])
        frac, sp = ratio_spread(best["iops_mean"], best["iops_stdev"],
                                one["iops_mean"], one["iops_stdev"])
        what = (f"seqread, {max_nj} jobs at ts{ts} (the best slice) keep "
                f"{fmt_ratio(frac, sp)} of one job at ts0 (CFQ level: ≥ {SLICE_CFQ_TARGET})")
        v.append(pass_fail("cfq_level", False, what, ts=ts, value=frac) if frac is None else
                 judge("cfq_level", frac, SLICE_CFQ_TARGET, ratio_res(frac, best, one), what,
                       ts=ts, value=frac))
    return v


PEAK_WORDS = {"above": "ahead", "below": "behind", "straddles": "indistinguishable"}


def ahead_verdicts(rs, clock):
    """Every rnull row ahead of null_blk's row of the same variant, as the
    peak matrix's rows (first writes, the QD ladders)."""
    return [target_verdict("rnull_vs_null_blk", row_cmp(r), clock, PEAK_AHEAD_RATIO,
                           f"{r['variant']}: rnull/null_blk", PEAK_WORDS, variant=r["variant"])
            for r in rs
            if r["driver"] == "rnull" and r["ref"] == REF_DRIVER and r["ratio"] is not None]


def bind_verdicts(cells, clock):
    """rnull's total IOPS on blk-mq's shared tag set ahead of null_blk's on
    the same; the host budget's rows are shown beside it, not judged (null_blk
    has no budget)."""
    return [target_verdict("rnull_vs_null_blk", c["vs_ref"], clock, PEAK_AHEAD_RATIO,
                           f"{c['variant']}: rnull/null_blk, total of 4 devices", PEAK_WORDS,
                           variant=c["variant"])
            for c in cells
            if c["variant"] == BIND_REF_VARIANT and c["driver"] == "rnull" and c["vs_ref"]
            and c["vs_ref"]["ratio"] is not None]
HOST_WORDS = {"above": f"costs ≤ {1 - HOST_COST_FLOOR:.0%}",
              "below": f"costs > {1 - HOST_COST_FLOOR:.0%}",
              "straddles": f"indistinguishable from a {1 - HOST_COST_FLOOR:.0%} cost"}


def peak_verdicts(cells, clock):
    """Every rnull/null_blk ratio ahead, for the rows null_blk can be
    configured for (time slices without the model change nothing, so their
    rows count); every host-* row (the host budget, which null_blk does not
    have) within 1 % of its reference variant, its ratio against the
    reference's null_blk shown in the table but not judged."""
    v = []
    for c in cells:
        tag = f"c{c['cpus']} {c['variant']}"
        if c["variant"].startswith("host-") and c["ref"]:
            st = c["cost_vs_ref"]
            if not st or st["ratio"] is None:
                warn(f"peak/c{c['cpus']}/{c['variant']}: no rnull run of the row or of its "
                     f"reference variant ({c['ref']}); host cost not checked")
                continue
            v.append(target_verdict("host_cost", st, clock, HOST_COST_FLOOR,
                                    f"{tag}: rnull / rnull {c['ref']}", HOST_WORDS,
                                    variant=c["variant"], ref=c["ref"]))
            continue
        st = c["rnull_vs_null_blk"]
        if st and st["ratio"] is not None:
            nb = "" if c["null_blk_variant"] == c["variant"] else f" (null_blk {c['null_blk_variant']})"
            v.append(target_verdict("rnull_vs_null_blk", st, clock, PEAK_AHEAD_RATIO,
                                    f"{tag}: rnull/null_blk{nb}", PEAK_WORDS,
                                    variant=c["variant"]))
        elif c["variant"].startswith("host-"):
            warn(f"peak/c{c['cpus']}/{c['variant']}: no ref file; host cost not checked")
    return v
