#!/bin/sh
# A short stress run with the engine of `make stress` (scripts/stress/guest/):
# 200 operations drawn from seed 1 (power cycles, queue counts, bad blocks,
# sysfs tunables, budget policy and depth, schedulers, removal attempts)
# while fio verifies data on three devices sharing a host budget. A splat,
# an I/O error or mismatch, a hung operation, a held tag or a leak fails
# it; the output names the operation n, and
# `make stress SEED=1 OPS=n STRESS_SKIP=hotplug` replays the run up to it.
#
# Before 099: the run's own kmemleak check counts only new leaks, and 099
# still sees every leak of the suite.
#
# CPU hotplug is left out: 6.12's sched_cpu_dying stops the CPU's fair
# deadline server whether or not it runs (its dl_server_stop lacks the
# "active" test later kernels have), and stopping one already stopped
# sometimes underflows dl_rq->running_bw: a scheduler WARN in
# kernel/sched/deadline.c, with or without rnull, that would fail the
# suite at random. `make stress` keeps the operation.
. "$(dirname "$0")/lib.sh"

[ -f /stress/main.sh ] || fail "/stress/main.sh is not in the initramfs"
STRESS_SEED=1 STRESS_OPS=200 STRESS_SKIP=hotplug sh /stress/main.sh || fail "the stress run failed"
