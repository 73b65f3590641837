"""Number formatting for tables, verdicts and plots."""

from __future__ import annotations

from clocks import VIRTUAL
from common import num


def fmt_iops(v):
    if v is None:
        return "–"
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.2f}M"
    if a >= 1e3:
        return f"{v / 1e3:.1f}k"
    return f"{v:.0f}"


def fmt_us(ns):
    if ns is None:
        return "–"
    us = ns / 1000.0
    return f"{us:.1f}" if us < 100 else f"{us:,.0f}"


def fmt_mibs(bytes_per_s):
    """Bandwidth in MiB/s (from bytes/s)."""
    if bytes_per_s is None:
        return "–"
    mib = bytes_per_s / (1 << 20)
    return f"{mib:.1f}" if mib < 100 else f"{mib:,.0f}"


def fmt_ratio(r, sp):
    if r is None:
        return "–"
    return f"{r:.3f} ± {sp:.3f}" if sp is not None else f"{r:.3f}"


def fmt_p(p):
    if p is None:
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.2g}"


def fmt_ci(st):
    """'[lo, hi] p=…' of a ratio_stats dict (wall clock); '–' without a CI."""
    if st.get("ci_lo") is None:
        return "–"
    p = fmt_p(st.get("p"))
    return f"[{st['ci_lo']:.3f}, {st['ci_hi']:.3f}] p{'' if p.startswith('<') else '='}{p}"


def fmt_range(st):
    """'(min–max)' of the per-round ratios (virtual clock)."""
    if st.get("rmin") is None:
        return ""
    return f"({st['rmin']:.4f}–{st['rmax']:.4f})"


def fmt_cmp(st, clock):
    """A ratio_stats dict as one cell: on the virtual clock the ratio of means
    and the per-round min–max, on the wall clock the ratio and its 95 % CI
    with Welch's p."""
    r = st.get("ratio")
    if r is None:
        return "–"
    if clock == VIRTUAL:
        return f"{r:.4f} {fmt_range(st)}".strip()
    ci = fmt_ci(st)
    return f"{r:.3f}" + ("" if ci == "–" else f" {ci}")


def fmt_wall(s):
    s = num(s)
    if s is None:
        return "–"
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return (f"{h}h {m:02d}m {sec:02d}s" if h else f"{m}m {sec:02d}s") + f" ({s} s)"


def md_escape(s) -> str:
    return str(s).replace("|", "\\|")
