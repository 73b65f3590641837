#!/bin/sh
# `make stress`: seeded random operations under fio verify
# (STRESS_SEED, STRESS_OPS and the timeouts come in the job's env).
exec sh /stress/main.sh
