"""The policy_switch timeline: fio IOPS logs and the policy switch marks.

    <boot>/policy_switch/<variant>/<driver>/<job>_iops.<k>.log
    <boot>/policy_switch/<variant>/<driver>/switches.txt   ("<t_ms> <policy>")
"""

from __future__ import annotations

import math
import os
import re
import statistics
from dataclasses import dataclass, field

from common import natural_key, num, ordered, warn
from names import DRIVER_ORDER

LOG_RE = re.compile(r"^(?P<job>.+?)_iops(?:\.(?P<idx>\d+))?\.log$")


@dataclass
class Timeline:
    driver: str
    variant: str
    cpus: int | None = None
    series: dict = field(default_factory=dict)   # job -> ([t_ms], [iops])
    switches: list = field(default_factory=list)  # [(t_ms, policy)]
    segments: list = field(default_factory=list)  # rows for the table


def parse_iops_log(path: str):
    pts = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for ln, line in enumerate(f, 1):
                parts = [p.strip() for p in line.split(",")]
                if len(parts) < 2 or not parts[0]:
                    continue
                t, v = num(parts[0]), num(parts[1])
                if t is None or v is None:
                    warn(f"{path}:{ln}: unparsable line")
                    continue
                pts.append((t, v))
    except OSError as e:
        warn(f"{path}: cannot read: {e}")
    return pts


def bin_points(pts):
    """Sum values sharing a time bin (read+write lines, several log files).
    The bin width is the median spacing of the distinct timestamps."""
    if not pts:
        return [], []
    ts = sorted({t for t, _ in pts})
    diffs = sorted(b - a for a, b in zip(ts, ts[1:]) if b > a)
    width = diffs[len(diffs) // 2] if diffs else 1.0
    bins: dict[int, float] = {}
    for t, v in pts:
        k = int(round(t / width))
        bins[k] = bins.get(k, 0.0) + v
    ks = sorted(bins)
    return [k * width for k in ks], [bins[k] for k in ks]


def parse_switches(path: str):
    out = []
    if not os.path.exists(path):
        warn(f"{path}: missing")
        return out
    with open(path, encoding="utf-8", errors="replace") as f:
        for ln, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            t = num(parts[0])
            if t is None or len(parts) < 2:
                warn(f"{path}:{ln}: expected '<t_ms> <policy>'")
                continue
            out.append((t, parts[1]))
    return sorted(out)


def collect_timelines(boots) -> list[Timeline]:
    """Timelines of every boot (parse.Boot: cpus, path)."""
    tls = []
    for boot in boots:
        if boot.path is not None:
            tls += _boot_timelines(os.path.join(boot.path, "policy_switch"), boot.cpus)
    return tls


def _boot_timelines(base: str, cpus) -> list[Timeline]:
    tls = []
    if not os.path.isdir(base):
        return tls
    for var in sorted(os.listdir(base)):
        vdir = os.path.join(base, var)
        if not os.path.isdir(vdir):
            continue
        for drv in ordered([d for d in os.listdir(vdir)
                            if os.path.isdir(os.path.join(vdir, d))], DRIVER_ORDER):
            ddir = os.path.join(vdir, drv)
            logs = [f for f in os.listdir(ddir) if LOG_RE.match(f)]
            if not logs:
                continue
            tl = Timeline(driver=drv, variant=var, cpus=cpus)
            per_job: dict[str, list] = {}
            for fn in sorted(logs, key=natural_key):
                job = LOG_RE.match(fn).group("job")
                per_job.setdefault(job, []).extend(parse_iops_log(os.path.join(ddir, fn)))
            for job in ordered(per_job, ["A", "B"]):
                t, v = bin_points(per_job[job])
                if t:
                    tl.series[job] = (t, v)
                else:
                    warn(f"{ddir}: no samples for job {job}")
            tl.switches = parse_switches(os.path.join(ddir, "switches.txt"))
            tl.segments = timeline_segments(tl)
            tls.append(tl)
    return tls


def timeline_segments(tl: Timeline) -> list[dict]:
    """Mean IOPS per job between consecutive policy switches."""
    if not tl.series:
        return []
    t_end = max(t[-1] for t, _ in tl.series.values())
    t_beg = min(t[0] for t, _ in tl.series.values())
    # A fio log sample stamped t averages the window ending at t, so a
    # segment [a, b) owns the samples with a < t <= b.
    bounds = []
    sw = tl.switches
    if not sw or sw[0][0] >= t_beg:
        bounds.append((-math.inf, sw[0][0] if sw else t_end, "(start)"))
    for i, (t, pol) in enumerate(sw):
        nxt = sw[i + 1][0] if i + 1 < len(sw) else t_end
        bounds.append((t, nxt, pol))
    segs = []
    for a, b, pol in bounds:
        seg = {"policy": pol, "start_ms": max(a, 0.0) if a == -math.inf else a,
               "end_ms": b, "jobs": {}}
        for job, (ts, vs) in tl.series.items():
            sel = [v for t, v in zip(ts, vs) if a < t <= b]
            seg["jobs"][job] = statistics.fmean(sel) if sel else None
        if pol == "(start)" and not any(v is not None for v in seg["jobs"].values()):
            continue  # nothing logged before the first switch
        segs.append(seg)
    return segs
