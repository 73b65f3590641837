"""Which clock produced the figures (meta.json "clock"), and what it can and
cannot show."""

from __future__ import annotations

from common import warn

VIRTUAL, WALL = "virtual", "wall"

LABEL = {
    VIRTUAL: "virtual (QEMU `-accel tcg -icount shift=0,sleep=off -rtc clock=vm`)",
    WALL: "wall (multi-threaded QEMU TCG, host time)",
}

# One line for the header: what the figures mean on this clock.
MEANS = {
    VIRTUAL: ("One virtual nanosecond per guest instruction, idle time skipped, "
              "vCPUs run round-robin on one host thread: IOPS measure instructions "
              "per I/O and repeat to about 4 digits between rounds."),
    WALL: ("Guest time follows the host's wall clock, each vCPU on its own host "
           "thread (a 2-core host): contention between vCPUs shows, but rounds vary "
           "by 10–25 %, so only large differences are resolved."),
}

# How a ratio A/B of two sets of rounds is reported on this clock.
COMPARISON = {
    VIRTUAL: ("ratio of means, with the min–max of the per-round ratios in "
              "parentheses; a verdict compares the ratio of means with its target"),
    WALL: ("ratio of means with a 95 % confidence interval in brackets (delta "
           "method on the log means, Welch–Satterthwaite degrees of freedom) and "
           "Welch's t-test p-value for the difference of the means; a verdict "
           "compares the interval with its target"),
}

CANNOT_SHOW = {
    VIRTUAL: [
        "Contention between CPUs: the vCPUs take turns on one host thread, so "
        "cache-line bouncing, lock contention and parallel speed-up do not appear; "
        "a figure for 4 vCPUs is the instruction cost of 4 streams, not their "
        "parallel throughput.",
        "Real device or timer latency: time advances by instructions executed and "
        "jumps over idle periods, so latencies and timer-driven completions "
        "(irqmode 2) are in virtual time, not host time.",
        "Anything that depends on host wall time (host load, frequency scaling, "
        "host I/O).",
    ],
    WALL: [
        "Differences smaller than the round-to-round noise (10–25 % on a 2-core "
        "host): a confidence interval that contains 1 means no difference was "
        "resolved, not that there is none.",
        "Instruction-level cost: QEMU's translation, the host's scheduler and "
        "other host load are part of every figure.",
        "Bare-metal parallel scaling: with more vCPUs than host cores, vCPUs "
        "share cores, so contention figures are those of an overcommitted guest.",
    ],
}


def clock_of(meta: dict) -> str:
    """meta["clock"]: "virtual" or "wall"; absent (old runs) means wall."""
    c = meta.get("clock") if isinstance(meta, dict) else None
    if c is None:
        return WALL
    c = str(c).strip().lower()
    if c not in (VIRTUAL, WALL):
        warn(f"meta.json: clock {c!r} is neither 'virtual' nor 'wall'; assuming wall")
        return WALL
    return c
