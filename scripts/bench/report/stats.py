"""Statistics over benchmark rounds.

- mean_or_none / stdev0: mean and sample stdev of the values that exist.
- ratio_spread: the old propagated spread of a ratio of means,
  ratio·√((sa/ma)²+(sb/mb)²) (kept for the tables' "± spread").
- welch: Welch's t-test for the difference of two means (two-sided p).
- ratio_ci: 95 % confidence interval of the ratio of two means by the delta
  method on the log means, with Welch–Satterthwaite degrees of freedom:
      log R = log ma − log mb,  u = sa²/(na·ma²) + sb²/(nb·mb²),
      df = u² / ((sa²/(na·ma²))²/(na−1) + (sb²/(nb·mb²))²/(nb−1)),
      CI = R·exp(± t(0.975, df)·√u).
  The interval is asymmetric around R and never contains 0 or negative
  values (IOPS are positive).
- round_ratio_range: min and max of the per-round ratios a_i / b_i, rounds
  paired by their number (the guest runs the variants of round i together).
- ratio_stats: all of the above for one A/B comparison.

The t distribution comes from scipy when it is importable; otherwise from
the built-in t_sf_builtin / t_ppf_builtin (regularized incomplete beta
function by continued fraction, quantile by bisection), which agree with
scipy to about 1e-8 (relative).
"""

from __future__ import annotations

import math
import statistics

try:  # Debian python3-scipy; optional
    from scipy.stats import t as _scipy_t
except Exception:  # ImportError, or a broken install
    _scipy_t = None

from thresholds import CONFIDENCE


def mean_or_none(vals):
    vals = [v for v in vals if v is not None]
    return statistics.fmean(vals) if vals else None


def stdev0(vals):
    """Sample stdev of the values that exist; 0 with fewer than two."""
    vals = [v for v in vals if v is not None]
    return statistics.stdev(vals) if len(vals) > 1 else 0.0


def ratio_spread(ma, sa, mb, sb):
    """ratio ma/mb and its propagated spread; (None, None) if undefined."""
    if ma is None or mb is None or mb == 0:
        return None, None
    r = ma / mb
    if ma == 0:
        return r, 0.0
    return r, abs(r) * math.sqrt((sa / ma) ** 2 + (sb / mb) ** 2)


# --------------------------------------------------------------------------
# Student's t distribution

def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
           + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def _betacf(a, b, x, eps=1e-16, tiny=1e-300, maxit=500):
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    def clamp(v):
        return tiny if abs(v) < tiny else v

    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 / clamp(1.0 - qab * x / qap)
    h = d
    for m in range(1, maxit + 1):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 / clamp(1.0 + aa * d)
            c = clamp(1.0 + aa / c)
            delta = d * c
            h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def t_sf_builtin(t: float, df: float) -> float:
    """P(T > t) for Student's t with df degrees of freedom (df > 0, real)."""
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


def t_ppf_builtin(p: float, df: float) -> float:
    """Quantile of Student's t: the t with P(T <= t) = p."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"t quantile: p={p} not in (0, 1)")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_ppf_builtin(1.0 - p, df)
    q = 1.0 - p
    lo, hi = 0.0, 1.0
    while t_sf_builtin(hi, df) > q:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_sf_builtin(mid, df) > q:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return (lo + hi) / 2.0


def t_sf(t: float, df: float) -> float:
    if _scipy_t is not None:
        return float(_scipy_t.sf(t, df))
    return t_sf_builtin(t, df)


def t_ppf(p: float, df: float) -> float:
    if _scipy_t is not None:
        return float(_scipy_t.ppf(p, df))
    return t_ppf_builtin(p, df)


# --------------------------------------------------------------------------
# comparisons of two sets of rounds

def _moments(vals):
    return len(vals), statistics.fmean(vals), statistics.variance(vals)


def _welch_df(ua, na, ub, nb):
    """Welch–Satterthwaite degrees of freedom of ua + ub (variances of the
    two means), each estimated from n−1 degrees of freedom."""
    den = ua * ua / (na - 1) + ub * ub / (nb - 1)
    return (ua + ub) ** 2 / den if den > 0 else None


def welch(a, b):
    """Welch's t-test of mean(a) − mean(b): {t, df, p} (two-sided p), or
    None with fewer than two values on either side."""
    if len(a) < 2 or len(b) < 2:
        return None
    na, ma, va = _moments(a)
    nb, mb, vb = _moments(b)
    ua, ub = va / na, vb / nb
    if ua + ub == 0:  # both sets constant
        same = ma == mb
        return {"t": 0.0 if same else math.copysign(math.inf, ma - mb),
                "df": None, "p": 1.0 if same else 0.0}
    t = (ma - mb) / math.sqrt(ua + ub)
    df = _welch_df(ua, na, ub, nb)
    return {"t": t, "df": df, "p": min(1.0, 2.0 * t_sf(abs(t), df))}


def ratio_ci(a, b, conf=CONFIDENCE):
    """(lo, hi, df) of mean(a)/mean(b) by the delta method on the log means
    with Welch–Satterthwaite df; None with fewer than two values on either
    side or a non-positive mean."""
    if len(a) < 2 or len(b) < 2:
        return None
    na, ma, va = _moments(a)
    nb, mb, vb = _moments(b)
    if ma <= 0 or mb <= 0:
        return None
    r = ma / mb
    ua, ub = va / (na * ma * ma), vb / (nb * mb * mb)
    if ua + ub == 0:
        return r, r, None
    df = _welch_df(ua, na, ub, nb)
    h = t_ppf(0.5 + conf / 2.0, df) * math.sqrt(ua + ub)
    return r * math.exp(-h), r * math.exp(h), df


def round_ratio_range(a, b, ra=None, rb=None):
    """(min, max) of a_i / b_i over the rounds both have (paired by round
    number when ra/rb are given, else by position); without common rounds,
    the extremes min(a)/max(b) and max(a)/min(b)."""
    ra = list(ra) if ra is not None else list(range(len(a)))
    rb = list(rb) if rb is not None else list(range(len(b)))
    bmap = dict(zip(rb, b))
    rs = [x / bmap[k] for k, x in zip(ra, a) if bmap.get(k)]
    if rs:
        return min(rs), max(rs)
    if a and b and min(b) > 0:
        return min(a) / max(b), max(a) / min(b)
    return None, None


def ratio_stats(a, b, ra=None, rb=None, conf=CONFIDENCE) -> dict:
    """Everything the report says about mean(a) / mean(b)."""
    out = {"ratio": None, "spread": None, "ci_lo": None, "ci_hi": None,
           "df": None, "p": None, "rmin": None, "rmax": None}
    if not a or not b:
        return out
    r, sp = ratio_spread(statistics.fmean(a), stdev0(a), statistics.fmean(b), stdev0(b))
    out.update(ratio=r, spread=sp)
    if r is None:
        return out
    ci = ratio_ci(a, b, conf)
    if ci:
        out.update(ci_lo=ci[0], ci_hi=ci[1], df=ci[2])
    w = welch(a, b)
    if w:
        out["p"] = w["p"]
    out["rmin"], out["rmax"] = round_ratio_range(a, b, ra, rb)
    return out
