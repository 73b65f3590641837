"""Every numeric target and threshold of the report, in one place.

verdicts.py and compare.py read them from here; README.md explains where
each comes from.
"""

# Yu Kuai's fairness scenario: job A under `borrow` must get at least this
# many times its IOPS under `fair` ...
FAIRNESS_TARGET_RATIO = 1.8
# ... and the light disk B's mean latency must stay within this factor of
# the configured completion time.
FAIRNESS_LAT_FACTOR = 2.0

# Scenario `policies` (the maintainers' cases under every policy, issue #14;
# the run finds the policies in host/policy). The tuples below give targets
# to the policies they name: a policy named in none of them gets the Busch
# figure without a target and the Axboe split target.
# Kuai: the busy device's IOPS under `borrow` / under `fair` must reach
# FAIRNESS_TARGET_RATIO, as in the `fairness` scenario.
# Busch: the light QD1 job must keep at least this share of its IOPS alone
# under these policies (those the run has) ...
BUSCH_KEEP_FLOOR = 0.9
BUSCH_KEEP_POLICIES = ("fair", "borrow", "window")
# ... and under these visibly lose: keep at most this share (Busch measured
# 1,841 / 2,726 = 0.675 without fairness).
BUSCH_LOSE_CEILING = 0.8
BUSCH_LOSE_POLICIES = ("none",)
# Axboe: QD32 against QD32 under a host bandwidth limit, the smaller
# device's bandwidth over the larger's, under every policy but these.
SPLIT_FLOOR = 0.95
SPLIT_EXEMPT_POLICIES = ("none",)
# Every run, while fio's I/O runs (`r<N>.handoffs`): refused queues that
# waited 1 ms or more after a tag they could use was freed
# (host/slow_handoffs), at most this many.
SLOW_HANDOFFS_MAX = 0

# Herrmann's time slices: the slice the gain target refers to, the
# gain it must bring to several sequential streams, the share a single
# stream (or random I/O) must keep, and the CFQ level (several streams at
# the best slice against one stream without slices).
SLICE_GAIN_TS = 250
SLICE_GAIN_TARGET = 1.45
SLICE_LOSS_FLOOR = 0.97
SLICE_CFQ_TARGET = 0.70

# Peak matrix: rnull / null_blk must be at least this ("ahead") ...
PEAK_AHEAD_RATIO = 1.00
# ... and a host tag budget that never binds may cost at most 1 % against
# the same variant without it: rnull(host-*) / rnull(ref) >= this.
HOST_COST_FLOOR = 0.99

# Confidence level of the intervals and the two-sided test on the wall clock.
CONFIDENCE = 0.95

# Virtual clock: rounds repeat to about 4 digits, so a relative difference
# below this is reported as "equal" (hot path, slice cost).
VIRTUAL_EQUAL_REL = 0.001

# compare.py: two runs "agree" when no IOPS and no rnull/null_blk ratio
# differs by more than this (relative).
COMPARE_AGREE_REL = 0.005

# The thresholds each scenario's verdicts are judged by, by name: the
# report's header lists them with their values. A name in CLOCK_ONLY
# applies on that clock only.
SCENARIO_THRESHOLDS = {
    "peak": ("PEAK_AHEAD_RATIO", "HOST_COST_FLOOR", "CONFIDENCE"),
    "first_write": ("PEAK_AHEAD_RATIO", "CONFIDENCE"),
    "qd_ladder": ("PEAK_AHEAD_RATIO", "CONFIDENCE"),
    "bind_tags": ("PEAK_AHEAD_RATIO", "CONFIDENCE"),
    "hotpath": ("VIRTUAL_EQUAL_REL", "CONFIDENCE"),
    "slice_cost": ("VIRTUAL_EQUAL_REL", "CONFIDENCE"),
    "fairness": ("FAIRNESS_TARGET_RATIO", "FAIRNESS_LAT_FACTOR"),
    "policies": ("FAIRNESS_TARGET_RATIO", "BUSCH_KEEP_FLOOR", "BUSCH_KEEP_POLICIES",
                 "BUSCH_LOSE_CEILING", "BUSCH_LOSE_POLICIES", "SPLIT_FLOOR",
                 "SPLIT_EXEMPT_POLICIES", "SLOW_HANDOFFS_MAX"),
    "slices": ("SLICE_GAIN_TS", "SLICE_GAIN_TARGET", "SLICE_LOSS_FLOOR", "SLICE_CFQ_TARGET"),
    "slice_single": ("SLICE_LOSS_FLOOR",),
}
CLOCK_ONLY = {"CONFIDENCE": "wall", "VIRTUAL_EQUAL_REL": "virtual"}
