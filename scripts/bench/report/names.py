"""Names and orders of the scenarios, variants, drivers and jobs."""

from __future__ import annotations

import re

from common import natural_key, ordered

SCENARIO_ORDER = [
    "peak", "qd_sweep", "shared_tags", "memory", "starvation", "hotpath",
    "fairness", "block035", "policies", "slices", "slice_mix", "slice_clock", "slice_single",
    "slice_cost", "policy_switch", "first_write", "qd_ladder", "bind_tags",
]
# bench/results/<family>/ keeps the reference run of one `make bench`
# scenario; its report also has the scenarios that scenario's runs write
# (slices runs the mix, slice_mix).
FAMILY_SCENARIOS = {"slices": ("slices", "slice_mix")}
DRIVER_ORDER = ["rnull", "null_blk", "rnull_mod"]
# Display order of tag policies; the benchmarks run whatever host/policy
# lists, and a policy not named here comes after these.
POLICY_ORDER = ["none", "fair", "borrow", "lend", "window"]
SLICE_WORKLOADS = ["seqread", "seqwrite", "randread"]
SLICE_RE = re.compile(r"^(?P<wl>.+?)-ts(?P<ts>\d+)-j(?P<nj>\d+)$")

# The peak matrix (scenario peak, one boot per vCPU count).
HOST_POLICIES = ["fair", "borrow", "lend", "none"]
PEAK_MATRIX = (
    [f"irq{i}-qd{q}" for i in (0, 1, 2) for q in (1, 32)]
    + [f"mem-{rw}-qd{q}" for rw in ("write", "read") for q in (1, 32)]
    + [f"host-{p}-qd{q}" for q in (1, 32) for p in HOST_POLICIES]
    + [f"ts250-qd{q}" for q in (1, 32)]
)
PEAK_MATRIX_RE = re.compile(r"^(irq\d+|mem-(read|write)|host-\w+|ts\d+)-qd\d+$")

# The QD ladders: polled (io_uring IOPOLL) and interrupt-driven.
LADDER_QDS = (1, 2, 4, 8, 16, 32, 64)
LADDER_VARIANTS = [f"{m}-qd{q}" for m in ("poll", "irq") for q in LADDER_QDS]
# Binding shared tags: one fio job name per device; the host-budget rows
# are set beside blk-mq's shared tag set (their `ref`).
BIND_DEVICES = ["d0", "d1", "d2", "d3"]
BIND_REF_VARIANT = "shared"

VARIANT_ORDER = {
    "peak": ["qd1", "qd32"] + PEAK_MATRIX,
    "shared_tags": ["per-device", "shared"],
    "memory": ["write", "read"],
    "hotpath": ["tags-off"] + POLICY_ORDER,
    "fairness": POLICY_ORDER,
    "block035": POLICY_ORDER,
    "first_write": ["qd1", "qd32"],
    "qd_ladder": LADDER_VARIANTS,
    "bind_tags": ["per-device", "shared"] + [f"host-{p}" for p in POLICY_ORDER],
}
# Scenario `policies`: variants `<sub-scenario>-<policy>`, sub-scenarios in
# this order.
POLICIES_SUBS = ["kuai", "busch", "qd1_alone", "qd32_split", "block035", "latencies"]

# Scenarios without group_reporting: one row per fio job.
PER_JOB_SCENARIOS = {"fairness", "block035", "policies", "slice_mix", "bind_tags"}
JOB_ORDER = {"fairness": ["A", "B"], "block035": ["fast", "slow"],
             "policies": ["A", "B", "heavy", "light", "a", "b", "fast", "slow",
                          "100us", "1ms", "10ms"],
             "slice_mix": ["rand", "seq"], "bind_tags": BIND_DEVICES}
REF_DRIVER = "null_blk"
# Scenarios whose every rnull row is judged against null_blk's, as the
# peak matrix's.
AHEAD_SCENARIOS = ("first_write", "qd_ladder")
HOTPATH_REF_VARIANT = "tags-off"
# Header of the ratio column where the reference is not C null_blk.
RATIO_HEAD = {
    "hotpath": f"ratio vs {HOTPATH_REF_VARIANT}",
    "slices": "ratio vs ts0, same jobs",
    "slice_clock": "ratio vs ts0, same jobs",
    "slice_single": "ratio vs ts0, same rw",
    "slice_cost": "ratio vs rnull ts0, same qd",
}


def slices_key(v: str):
    m = SLICE_RE.match(v)
    if not m:
        return (1, natural_key(v))
    wl = m["wl"]
    wi = SLICE_WORKLOADS.index(wl) if wl in SLICE_WORKLOADS else len(SLICE_WORKLOADS)
    return (0, wi, wl, int(m["ts"]), int(m["nj"]))


def split_policy_variant(var: str):
    """(sub-scenario, policy) of a `policies` variant `<sub>-<policy>`;
    policy None without a dash."""
    sub, sep, pol = var.rpartition("-")
    return (sub, pol) if sep else (var, None)


def policies_key(var: str):
    """Order of `policies` variants: sub-scenario, then policy."""
    sub, pol = split_policy_variant(var)
    si = POLICIES_SUBS.index(sub) if sub in POLICIES_SUBS else len(POLICIES_SUBS)
    pi = POLICY_ORDER.index(pol) if pol in POLICY_ORDER else len(POLICY_ORDER)
    return (si, natural_key(sub), pi, natural_key(pol or ""))


def variant_order(scen: str, variants):
    if scen == "slices":
        return sorted(variants, key=slices_key)
    if scen == "policies":
        return sorted(variants, key=policies_key)
    return ordered(variants, VARIANT_ORDER.get(scen, ()))


def variant_number(v: str):
    m = re.search(r"(\d+)", v)
    return int(m.group(1)) if m else None


def is_peak_matrix(variants) -> bool:
    """Whether the peak variants are the matrix's (new layout) rather than
    the old qd1/qd32."""
    return any(PEAK_MATRIX_RE.match(v) for v in variants)


def family_scenarios(family: str) -> tuple:
    """The scenarios of a family's report."""
    return FAMILY_SCENARIOS.get(family, (family,))
