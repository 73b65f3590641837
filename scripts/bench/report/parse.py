"""Reading a RESULTS tree: meta.json, the boots, fio JSON, `ref` and
`params` files.

Layouts (see README.md):

    new: RESULTS/c<cpus>/<scenario>/<variant>/<driver>/r<N>.json
         RESULTS/c<cpus>/<scenario>/<variant>/<driver>/r<N>.handoffs   (optional)
         RESULTS/c<cpus>/<scenario>/<variant>/<driver>/r<N>.handoffs_run   (optional)
         RESULTS/c<cpus>/<scenario>/<variant>/{ref,params}   (optional)
    old: RESULTS/<scenario>/<variant>/<driver>/r<N>.json     (one boot,
         meta.json guest_cpus vCPUs)
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from clocks import clock_of
from common import dig, natural_key, num, warn
from names import PER_JOB_SCENARIOS

PCT_KEYS = {"p50": "50.000000", "p99": "99.000000", "p999": "99.900000"}
RFILE_RE = re.compile(r"^r(\d+)\.json$")
HANDOFFS_SUFFIX = ".handoffs"
HANDOFFS_RUN_SUFFIX = ".handoffs_run"
BOOT_RE = re.compile(r"^c(\d+)$")


@dataclass
class Sample:
    """Metrics of one (aggregated) fio job in one round."""
    iops: float
    p50: float | None = None
    p99: float | None = None
    p999: float | None = None
    lat_mean: float | None = None
    ctx: float | None = None
    total_ios: float | None = None
    bw: float | None = None          # bytes/s, read + write
    handoffs: int | None = None      # host/slow_handoffs' delta while fio's I/O ran
    handoffs_run: int | None = None  # ... over the whole run (fio's start and end too)
    round: int | None = None
    synthetic: bool = False          # the fio document is marked synthetic
    step: float | None = None        # IOPS: the figure's resolution (iops_step)


@dataclass
class Boot:
    cpus: int | None
    path: str | None                # None: its files are not at hand (a summary.json)
    skip: frozenset = frozenset()   # names in path that are not scenarios


@dataclass
class Results:
    meta: dict
    clock: str
    boots: list
    # (cpus, scenario) -> variant -> driver -> job -> [Sample]
    data: dict = field(default_factory=dict)
    # (cpus, scenario, variant) -> reference variant (the `ref` file)
    refs: dict = field(default_factory=dict)
    # (cpus, scenario, variant) -> {driver: module params} (the `params` file)
    params: dict = field(default_factory=dict)
    # fio result files read, and how many of them are marked synthetic
    files: int = 0
    synthetic_files: int = 0


def load_json(path: str):
    """Load a JSON object from a file, tolerating text before/after it (fio
    prints warnings before its JSON)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        warn(f"{path}: cannot read: {e}")
        return None
    start = text.find("{")
    if start < 0:
        warn(f"{path}: no JSON object found")
        return None
    try:
        obj, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as e:
        warn(f"{path}: invalid JSON: {e}")
        return None
    if not isinstance(obj, dict):
        warn(f"{path}: top-level JSON is not an object")
        return None
    return obj


def _main_dir(job: dict) -> str:
    """The direction ('read'/'write') that carried I/O (read preferred)."""
    r = num(dig(job, "read", "total_ios"), 0) or num(dig(job, "read", "iops"), 0)
    w = num(dig(job, "write", "total_ios"), 0) or num(dig(job, "write", "iops"), 0)
    return "write" if (w and not r) else "read"


def job_sample(job: dict, ctx: str) -> Sample:
    iops = 0.0
    have = False
    for d in ("read", "write"):
        v = num(dig(job, d, "iops"))
        if v is not None:
            iops += v
            have = True
    if not have:
        warn(f"{ctx}: missing key read.iops/write.iops")
    d = _main_dir(job)
    pct = dig(job, d, "clat_ns", "percentile", default={}) or {}
    s = Sample(iops=iops)
    for attr, key in PCT_KEYS.items():
        setattr(s, attr, num(pct.get(key)) if isinstance(pct, dict) else None)
    s.lat_mean = num(dig(job, d, "lat_ns", "mean"))
    s.ctx = num(dig(job, "ctx"))
    tio = [num(dig(job, x, "total_ios")) for x in ("read", "write")]
    s.total_ios = sum(t for t in tio if t is not None) if any(
        t is not None for t in tio) else None
    bws = [_bw_bytes(job, x) for x in ("read", "write")]
    s.bw = sum(b for b in bws if b is not None) if any(b is not None for b in bws) else None
    s.step = iops_step(job)
    return s


def iops_step(job: dict):
    """The resolution of a job's IOPS figure, in IO/s. fio computes a
    direction's figure as 1000 * total_ios / runtime, its runtime counted in
    whole milliseconds (rounded up): one millisecond more or less moves the
    figure by iops / runtime and one I/O more or less by 1000 / runtime, so
    the step is (iops + 1000) / runtime (runtime in ms), summed over the
    directions that did I/O. None without a runtime (the step is unknown)."""
    step = 0.0
    for d in ("read", "write"):
        iops = num(dig(job, d, "iops"), 0.0)
        if not iops:
            continue
        runtime = num(dig(job, d, "runtime"))
        if not runtime or runtime <= 0:
            return None
        step += (iops + 1000.0) / runtime
    return step


def _sum_steps(samples):
    steps = [s.step for s in samples]
    return None if any(x is None for x in steps) else sum(steps)


def _bw_bytes(job: dict, d: str):
    """Bandwidth of direction d in bytes/s: fio's bw_bytes, else its bw
    (KiB/s)."""
    v = num(dig(job, d, "bw_bytes"))
    if v is None:
        kib = num(dig(job, d, "bw"))
        v = None if kib is None else kib * 1024
    return v


def parse_fio(path: str, per_job: bool) -> dict[str, Sample] | None:
    """Parse one fio result file -> {job_key: Sample}.

    Aggregated mode (per_job False): single key "" with IOPS summed over all
    jobs, latency percentiles from jobs[0], ctx and total_ios summed.
    Per-job mode: one key per job name (jobname)."""
    obj = load_json(path)
    if obj is None:
        return None
    jobs = obj.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        warn(f"{path}: missing or empty key jobs")
        return None
    samples = []
    for i, j in enumerate(jobs):
        if not isinstance(j, dict):
            warn(f"{path}: jobs[{i}] is not an object")
            continue
        name = str(j.get("jobname", f"job{i}"))
        samples.append((name, job_sample(j, f"{path}: jobs[{i}]")))
    if not samples:
        return None
    # A generated document says so (synthetic_fixture.py); fio never does.
    if obj.get("synthetic") is True:
        for _, s in samples:
            s.synthetic = True
    if per_job:
        out: dict[str, Sample] = {}
        for name, s in samples:
            if name in out:  # same name twice: sum IOPS, keep first latencies
                out[name].iops += s.iops
                out[name].step = _sum_steps((out[name], s))
                if s.bw is not None:
                    out[name].bw = (out[name].bw or 0.0) + s.bw
            else:
                out[name] = s
        return out
    first = samples[0][1]
    agg = Sample(iops=sum(s.iops for _, s in samples), p50=first.p50,
                 p99=first.p99, p999=first.p999, lat_mean=first.lat_mean,
                 synthetic=first.synthetic, step=_sum_steps(s for _, s in samples))
    ctxs = [s.ctx for _, s in samples if s.ctx is not None]
    tios = [s.total_ios for _, s in samples if s.total_ios is not None]
    bws = [s.bw for _, s in samples if s.bw is not None]
    agg.ctx = sum(ctxs) if ctxs else None
    agg.total_ios = sum(tios) if tios else None
    agg.bw = sum(bws) if bws else None
    return {"": agg}


def _subdirs(path: str, skip=()):
    return [n for n in sorted(os.listdir(path))
            if n not in skip and os.path.isdir(os.path.join(path, n))]


def _text_lines(path: str):
    """Non-empty lines of a small text file without #-comments; [] if absent."""
    if not os.path.isfile(path):
        return []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [ln.split("#", 1)[0].strip() for ln in f]
    except OSError as e:
        warn(f"{path}: cannot read: {e}")
        return []
    return [ln for ln in lines if ln]


def read_ref(vdir: str):
    """The `ref` file: one line, the name of the reference variant."""
    lines = _text_lines(os.path.join(vdir, "ref"))
    if len(lines) > 1:
        warn(f"{vdir}/ref: more than one line; using the first")
    return lines[0] if lines else None


def read_params(vdir: str) -> dict:
    """The `params` file: lines '<driver>: <module params>'."""
    path = os.path.join(vdir, "params")
    out = {}
    for ln in _text_lines(path):
        drv, sep, val = ln.partition(":")
        if not sep or not drv.strip():
            warn(f"{path}: expected '<driver>: <module params>', got {ln!r}")
            continue
        out[drv.strip()] = val.strip()
    return out


def guest_cpus(meta: dict):
    c = num(meta.get("guest_cpus"))
    return int(c) if c is not None else None


def boots_of(results: str, meta: dict) -> list[Boot]:
    """The guest boots of a run: one per c<cpus>/ directory (new layout),
    plus the results directory itself when it holds scenarios directly (old
    layout, meta guest_cpus vCPUs)."""
    names = _subdirs(results)
    cdirs = [n for n in names if BOOT_RE.match(n)]
    out = [Boot(int(BOOT_RE.match(n)[1]), os.path.join(results, n)) for n in cdirs]
    out.sort(key=lambda b: b.cpus)
    if len(names) > len(cdirs) or not cdirs:
        out.insert(0, Boot(guest_cpus(meta), results, frozenset(cdirs)))
    listed = meta.get("boots")
    if listed is not None and not isinstance(listed, list):
        warn("meta.json: boots is not a list")
        listed = []
    for b in listed or []:
        c = num(dig(b, "cpus"))
        if c is None:
            warn(f"meta.json: boot {b!r} has no cpus")
            continue
        bdir = os.path.join(results, f"c{int(c)}")
        if not os.path.isdir(bdir):
            warn(f"meta.json lists a boot with {int(c)} vCPUs, but {bdir} is missing")
            continue
        for scen in dig(b, "scenarios", default=[]) or []:
            if not os.path.isdir(os.path.join(bdir, str(scen))):
                warn(f"meta.json lists scenario {scen} for c{int(c)}, but it has no results")
    return out


def load_meta(results: str) -> dict:
    mpath = os.path.join(results, "meta.json")
    if os.path.exists(mpath):
        return load_json(mpath) or {}
    warn(f"{mpath}: missing")
    return {}


def collect(results: str, meta: dict | None = None, only=None) -> Results:
    """Read the whole tree (both layouts), or the scenarios in `only`."""
    meta = load_meta(results) if meta is None else meta
    if not os.path.isdir(results):
        warn(f"{results}: not a directory")
        return Results(meta, clock_of(meta), [])
    res = Results(meta, clock_of(meta), boots_of(results, meta))
    for boot in res.boots:
        for scen in _subdirs(boot.path, boot.skip):
            if only is not None and scen not in only:
                continue
            sdir = os.path.join(boot.path, scen)
            per_job = scen in PER_JOB_SCENARIOS
            for var in _subdirs(sdir):
                vdir = os.path.join(sdir, var)
                key = (boot.cpus, scen, var)
                ref = read_ref(vdir)
                if ref:
                    res.refs[key] = ref
                params = read_params(vdir)
                if params:
                    res.params[key] = params
                for drv in _subdirs(vdir):
                    _collect_driver(res, (boot.cpus, scen), var, drv,
                                    os.path.join(vdir, drv), per_job)
    return res


def read_handoffs(path: str):
    """A run's `r<N>.handoffs` file (the change of host/slow_handoffs while
    fio's I/O ran) or `r<N>.handoffs_run` (over the whole run): one integer;
    None if absent or unreadable."""
    lines = _text_lines(path)
    if not lines:
        return None
    try:
        n = int(lines[0])
    except ValueError:
        warn(f"{path}: expected an integer, got {lines[0]!r}")
        return None
    if n < 0:
        warn(f"{path}: negative count {n}")
        return None
    return n


def _collect_driver(res: Results, bkey, var, drv, ddir, per_job):
    files = sorted((f for f in os.listdir(ddir) if RFILE_RE.match(f)), key=natural_key)
    for fn in files:
        samples = parse_fio(os.path.join(ddir, fn), per_job)
        if not samples:
            continue
        res.files += 1
        res.synthetic_files += any(s.synthetic for s in samples.values())
        stem = os.path.join(ddir, fn[:-len(".json")])
        handoffs = read_handoffs(stem + HANDOFFS_SUFFIX)
        handoffs_run = read_handoffs(stem + HANDOFFS_RUN_SUFFIX)
        for job, s in samples.items():
            s.handoffs = handoffs
            s.handoffs_run = handoffs_run
            s.round = int(RFILE_RE.match(fn)[1])
            (res.data.setdefault(bkey, {}).setdefault(var, {})
             .setdefault(drv, {}).setdefault(job, []).append(s))
