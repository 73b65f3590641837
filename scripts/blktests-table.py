#!/usr/bin/env python3
"""The side-by-side table of blktests' null_blk tests: one row per test,
its result with C null_blk and with rnull as null_blk, and blktests' own
reason for any skip or the kind of failure.

Reads the TAP of blktests/run.sh (scripts/blktests.sh), whose null_blk
lines are labelled with the driver:

    ok 12 block/006 [null_blk]
    ok 40 block/006 [rnull] # SKIP null_blk module parameter blocking is missing
    not ok 41 zbd/001 => nullb1 [rnull] # failed (output)

usage: blktests-table.py TAP [--drivers null_blk,rnull] [--compact]
Prints a markdown table and a totals line; prints nothing if the TAP has
no null_blk lines. --compact merges the tests of a group whose results and
reasons are the same into one row (`block/006 007 010`), for the README. `--self-test` checks the parser on a fixed sample.
"""

import re
import sys

LINE = re.compile(
    r"^(?P<not>not )?ok \d+ (?P<test>\S+)(?: => \S+)? \[(?P<label>[^\]]+)\]"
    r"(?: # (?P<note>.*))?$"
)


def parse(lines, drivers):
    """{test: {driver: (result, reason)}} for the drivers' lines."""
    rows = {}
    for line in lines:
        m = LINE.match(line.rstrip("\n"))
        if not m or m["label"] not in drivers:
            continue
        note = m["note"] or ""
        if m["not"]:
            result, reason = "fail", note.removeprefix("failed").strip(" ()")
        elif note.startswith("SKIP"):
            result, reason = "skip", note.removeprefix("SKIP").strip()
            # blktests' "runtime ... 1.9s" line is not part of the reason.
            reason = re.sub(r"^runtime\s+\.\.\.\s+\S+;\s*", "", reason)
        else:
            result, reason = "pass", ""
        cell = rows.setdefault(m["test"], {})
        # A test run on several devices: its worst result stands.
        old = cell.get(m["label"])
        rank = {"pass": 0, "skip": 1, "fail": 2}
        if old is None or rank[result] > rank[old[0]]:
            cell[m["label"]] = (result, reason)
    return rows


def cells_of(row, drivers):
    """A test's result per driver and its reasons, each said once."""
    cells, reasons = [], []
    for d in drivers:
        result, reason = row.get(d, ("not run", ""))
        cells.append(result)
        if reason:
            reason = f"{d}: {reason}" if len(drivers) > 1 else reason
            # The same reason from both drivers is said without their names.
            bare = reason.split(": ", 1)[-1]
            if all(row.get(o, ("", ""))[1] == bare for o in drivers):
                reason = bare
            if reason not in reasons:
                reasons.append(reason)
    return tuple(cells), tuple(reasons)


def table(rows, drivers, compact=False):
    """The markdown table and a totals line, as a list of lines."""
    if not rows:
        return []
    out = [
        "| test | " + " | ".join(drivers) + " | blktests' reason |",
        "|---|" + "---|" * len(drivers) + "---|",
    ]
    key = lambda t: (t.split("/")[0], t)  # noqa: E731
    merged = []  # [group, [tests], cells, reasons]
    for test in sorted(rows, key=key):
        cells, reasons = cells_of(rows[test], drivers)
        group = test.split("/")[0]
        last = merged[-1] if merged else None
        if compact and last and last[0] == group and last[2:] == [cells, reasons]:
            last[1].append(test.split("/", 1)[1])
        else:
            merged.append([group, [test], cells, reasons])
    for _, tests, cells, reasons in merged:
        out.append(f"| {' '.join(tests)} | " + " | ".join(cells) + " | " + "; ".join(reasons) + " |")
    totals = []
    for d in drivers:
        results = [rows[t].get(d, ("not run", ""))[0] for t in rows]
        totals.append(
            f"{d}: {results.count('pass')} passed, {results.count('skip')} skipped, "
            f"{results.count('fail')} failed"
        )
    out.append("")
    out.append("; ".join(totals))
    return out


SAMPLE = """\
ok 1 block/006 [null_blk]
ok 2 block/014 [null_blk] # SKIP null_blk module parameter timeout is missing
not ok 3 zbd/001 => nullb1 [null_blk] # failed (output)
ok 4 block/003 => rnullb0 [mem]
ok 5 block/006 [rnull]
not ok 6 block/014 [rnull] # failed (exit)
ok 7 zbd/001 => nullb1 [rnull]
"""


def self_test():
    drivers = ["null_blk", "rnull"]
    rows = parse(SAMPLE.splitlines(), drivers)
    assert set(rows) == {"block/006", "block/014", "zbd/001"}, rows
    assert rows["block/014"]["null_blk"] == ("skip", "null_blk module parameter timeout is missing")
    assert rows["block/014"]["rnull"] == ("fail", "exit")
    assert rows["zbd/001"]["null_blk"] == ("fail", "output")
    lines = table(rows, drivers)
    assert lines[2] == "| block/006 | pass | pass |  |", lines
    assert lines[-1] == (
        "null_blk: 1 passed, 1 skipped, 1 failed; rnull: 2 passed, 0 skipped, 1 failed"
    ), lines[-1]
    compact = table(parse((SAMPLE + "ok 8 block/007 [null_blk]\nok 9 block/007 [rnull]\n").splitlines(), drivers), drivers, True)
    assert compact[2] == "| block/006 007 | pass | pass |  |", compact
    print("blktests-table: self-test passed")


def main(argv):
    if argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    drivers = ["null_blk", "rnull"]
    args = argv[2:]
    compact = "--compact" in args
    if "--drivers" in args and args.index("--drivers") + 1 < len(args):
        drivers = args[args.index("--drivers") + 1].split(",")
    with open(argv[1], encoding="utf-8") as f:
        rows = parse(f, drivers)
    for line in table(rows, drivers, compact):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
