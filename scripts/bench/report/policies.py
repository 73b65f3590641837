"""The `policies` scenario: the maintainers' tag-fairness cases under every
policy, as one table.

The guest runs each sub-scenario under each policy host/policy lists, as
variant `<sub>-<policy>` (rnull only, one row per fio job). A cell is one
(boot, sub-scenario, policy): the jobs' IOPS, the busy and the light job
(by their role in the sub-scenario), the light job against its solo
baseline, the bandwidth split between two equal jobs, and the slow
hand-offs the driver counted over the runs (`r<N>.handoffs`).
"""

from __future__ import annotations

from common import ordered, warn
from names import JOB_ORDER, policies_key, split_policy_variant
from rows import by_cpus

SCEN = "policies"

# Labels of the sub-scenarios (names.POLICIES_SUBS gives their order) and
# what each runs (guest.sh has the details and the reasons).
SUB_LABEL = {
    "kuai": "Kuai",
    "busch": "Busch",
    "qd1_alone": "Axboe a",
    "qd32_split": "Axboe b",
    "block035": "block/035",
    "latencies": "three latencies",
}
SUB_WHAT = {
    "kuai": "busy A (QD32) and light B (10 IOPS, QD1), 1 ms completions, 32 host tags",
    "busch": "heavy 128 KiB random writes at QD256 behind a device bandwidth limit against "
             "light 512-byte random reads at QD1 with a fixed completion time, 63 host tags",
    "qd1_alone": "Busch's light QD1 job alone (the heavy device idle): its solo baseline",
    "qd32_split": "QD32 against QD32 on two devices under a host bandwidth limit",
    "block035": "blktests block/035: fast (1 ms) and slow (100 ms) devices, QD64 each",
    "latencies": "three devices completing in 100 µs, 1 ms and 10 ms, QD12 each, 12 host tags",
}

# The jobs' roles: `busy` and `light` name fio jobs; `solo` names the
# sub-scenario whose `light` job, under the same policy, is the light job's
# baseline; `split` the two jobs whose bandwidth should be equal. Jobs of
# sub-scenarios without a busy/light role are listed per device.
ROLES = {
    "kuai": {"busy": "A", "light": "B"},
    "busch": {"busy": "heavy", "light": "light", "solo": "qd1_alone"},
    "qd1_alone": {"light": "light"},
    "qd32_split": {"split": ("a", "b")},
    "block035": {},
    "latencies": {},
}


def policy_cells(rows) -> list[dict]:
    """One cell per (boot, sub-scenario, policy) of scenario `policies`."""
    rows = [r for r in rows if r["scenario"] == SCEN]
    cells = []
    for cpus, rs in by_cpus(rows).items():
        index = {}
        for r in rs:
            sub, pol = split_policy_variant(r["variant"])
            if pol is None:
                warn(f"{SCEN}/{r['variant']}: not <sub-scenario>-<policy>; left out of the table")
                continue
            index.setdefault((sub, pol), {})[r["job"]] = r
        for sub, pol in sorted(index, key=lambda k: policies_key(f"{k[0]}-{k[1]}")):
            cells.append(_cell(cpus, sub, pol, index[(sub, pol)], index))
    return cells


def _mean(r, key="iops_mean"):
    return None if r is None else r.get(key)


def _cell(cpus, sub, pol, jobs, index) -> dict:
    roles = ROLES.get(sub, {})
    busy, light = jobs.get(roles.get("busy")), jobs.get(roles.get("light"))
    for role in ("busy", "light"):
        if roles.get(role) and jobs.get(roles[role]) is None:
            warn(f"{SCEN}/{sub}-{pol}: no job {roles[role]!r} ({role})")
    cell = {
        "cpus": cpus, "sub": sub, "policy": pol, "variant": f"{sub}-{pol}",
        "jobs": {j: jobs[j]["iops_mean"] for j in ordered(jobs, JOB_ORDER[SCEN])},
        "busy_job": roles.get("busy"), "light_job": roles.get("light"),
        "busy_iops": _mean(busy), "light_iops": _mean(light),
        "light_p99_ns": _mean(light, "p99_ns"),
        "solo_iops": None, "light_vs_solo": None,
        "split_jobs": None, "bw": None, "split": None,
        "slow_handoffs": None, "slow_handoffs_max": None, "slow_handoffs_run": None,
        "n": min(r["n"] for r in jobs.values()),
    }
    if roles.get("solo") and light is not None:
        solo = index.get((roles["solo"], pol), {}).get(roles["light"])
        if solo is None:
            warn(f"{SCEN}/{sub}-{pol}: no solo run ({roles['solo']}-{pol}, job {roles['light']})")
        else:
            cell["solo_iops"] = solo["iops_mean"]
            if solo["iops_mean"]:
                cell["light_vs_solo"] = light["iops_mean"] / solo["iops_mean"]
    if roles.get("split"):
        a, b = (jobs.get(j) for j in roles["split"])
        bw = [_mean(a, "bw_mean"), _mean(b, "bw_mean")]
        if None in bw:
            warn(f"{SCEN}/{sub}-{pol}: no bandwidth of jobs {roles['split']}")
        else:
            cell["split_jobs"] = list(roles["split"])
            cell["bw"] = dict(zip(roles["split"], bw))
            cell["split"] = min(bw) / max(bw) if max(bw) else None
    # Every job of a run carries the run's count: any job's figures will
    # do; the largest, should they differ.
    counts = [r for r in jobs.values() if r.get("slow_handoffs") is not None]
    if counts:
        cell["slow_handoffs"] = max(r["slow_handoffs"] for r in counts)
        cell["slow_handoffs_max"] = max(r["slow_handoffs_max"] for r in counts)
        runs = [r["slow_handoffs_run"] for r in counts if r.get("slow_handoffs_run") is not None]
        cell["slow_handoffs_run"] = max(runs) if runs else None
    else:
        warn(f"{SCEN}/{sub}-{pol}: no slow hand-off counts (r<N>.handoffs)")
    return cell


def find_cell(cells, sub, pol, cpus=None):
    for c in cells:
        if (c["sub"], c["policy"]) == (sub, pol) and (cpus is None or c["cpus"] == cpus):
            return c
    return None
