"""Warnings and small helpers shared by the report modules."""

from __future__ import annotations

import math
import re
import sys

WARNINGS: list[str] = []


def warn(msg: str) -> None:
    """Record a warning and print it to stderr (deduplicated)."""
    if msg in WARNINGS:
        return
    WARNINGS.append(msg)
    print(f"report: warning: {msg}", file=sys.stderr)


def natural_key(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(s))]


def ordered(items, preferred=()):
    """Sort `items`: those in `preferred` first (in that order), the rest
    in natural order."""
    items = list(dict.fromkeys(items))
    pref = [p for p in preferred if p in items]
    rest = sorted((i for i in items if i not in preferred), key=natural_key)
    return pref + rest


def cpus_key(c):
    """Sort key for a vCPU count that may be None (unknown)."""
    return (c is None, c or 0)


def dig(obj, *keys, default=None, ctx=None):
    """obj[k0][k1]... or `default`; warns (with ctx) when a key is missing."""
    cur = obj
    for k in keys:
        if isinstance(cur, dict) and k in cur:
            cur = cur[k]
        elif isinstance(cur, list) and isinstance(k, int) and -len(cur) <= k < len(cur):
            cur = cur[k]
        else:
            if ctx is not None:
                warn(f"{ctx}: missing key {'.'.join(str(x) for x in keys)}")
            return default
    return cur


def num(v, default=None):
    """v as a finite float, or `default`."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return default
    return f if math.isfinite(f) else default
