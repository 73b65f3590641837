"""Tests: one family's report from a RESULTS tree, again from a summary.json,
or cut from a committed report (refile.py).

    /usr/bin/python3 -m unittest discover -s scripts/bench/report -v
"""

import contextlib
import csv
import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import index  # noqa: E402
import refile  # noqa: E402
import report  # noqa: E402
import synthetic_fixture  # noqa: E402


def quiet(fn, *a, **kw):
    with contextlib.redirect_stderr(io.StringIO()):
        return fn(*a, **kw)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def load(path):
    return json.loads(read(path))


class FamilyTest(unittest.TestCase):
    """The boots fixture (peak and hotpath), its full report, and reports of
    one family made from the tree and from that report's summary.json."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.raw, cls.full = os.path.join(d, "raw"), os.path.join(d, "full")
        synthetic_fixture.generate_boots(cls.raw, "virtual")
        meta = load(os.path.join(cls.raw, "meta.json"))
        meta.update(commit="abc1234", checkout="/some/local/path")
        synthetic_fixture.write_json(os.path.join(cls.raw, "meta.json"), meta)
        cls.res = quiet(report.generate, cls.raw, cls.full, plots=False)
        cls.fam = quiet(report.generate, cls.raw, os.path.join(d, "fam"), plots=False,
                        family="hotpath")
        cls.again_dir = os.path.join(d, "again")
        cls.again = quiet(report.from_summary, cls.full, cls.again_dir, plots=False,
                          family="peak")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_family_from_the_tree(self):
        self.assertEqual({r["scenario"] for r in self.fam["rows"]}, {"hotpath"})
        self.assertEqual(set(self.fam["verdicts"]), {"hotpath"})
        meta = load(os.path.join(self.tmp.name, "fam", "meta.json"))
        self.assertEqual(list(meta["scenarios"]), ["hotpath"])
        self.assertEqual({tuple(b["scenarios"]) for b in meta["boots"]}, {("hotpath",)})
        self.assertNotIn("checkout", meta)
        self.assertEqual(meta["commit"], "abc1234")

    def test_again_from_summary_judges_alike(self):
        self.assertEqual({r["scenario"] for r in self.again["rows"]}, {"peak"})
        self.assertEqual([(v["text"], v["pass"]) for v in self.again["verdicts"]["peak"]],
                         [(v["text"], v["pass"]) for v in self.res["verdicts"]["peak"]])
        before = {k: v for k, v in self.res["peak_matrix"][3].items()}
        after = self.again["peak_matrix"][3]
        self.assertEqual(after["cost_vs_ref"], before["cost_vs_ref"])
        md = read(os.path.join(self.again_dir, "report.md"))
        self.assertIn("- **Scenarios:** `peak`\n", md)
        self.assertIn("- **Commit:** `abc1234`", md)
        self.assertTrue(self.again["source"]["from_summary"])
        self.assertIn("SYNTHETIC INPUT", md)          # the summary's source is kept
        self.assertNotIn("(`hotpath`)", md)
        self.assertNotIn("checkout", load(os.path.join(self.again_dir, "meta.json")))

    def test_again_refuses_an_older_summary(self):
        with tempfile.TemporaryDirectory() as d:
            summ = load(os.path.join(self.full, "summary.json"))
            for r in summ["rows"]:
                del r["iops_rounds"]
            synthetic_fixture.write_json(os.path.join(d, "summary.json"), summ)
            with self.assertRaisesRegex(ValueError, "iops_rounds"):
                quiet(report.from_summary, d, os.path.join(d, "out"), plots=False)
            self.assertIsNotNone(refile.why_not_again(summ, ("peak",)))
            self.assertIsNone(refile.why_not_again(load(os.path.join(self.full, "summary.json")),
                                                   ("peak",)))


OLD_REPORT = """# rnull benchmark report

- **Date:** 2026-01-01T00:00:00Z
- **Guest:** 2 vCPU, 1G RAM

IOPS are mean ± sample stdev over rounds.

**Verdict summary:** 1/2 checks pass.

- `block035` rnull/none: fast 1 < slow 2 → **FAIL**

## Memory (`memory`)

![memory](memory.png)

| memory table |

## block/035 (`block035`)

![block035](block035.png)

| block035 table |

**Verdicts:**

- rnull/none: fast 1 < slow 2 → **FAIL**
- rnull/fair: fast 3 ≥ slow 2 → **PASS**

## Warnings

- memory/write/rnull: something
- block035/none/rnull: something else
"""


class ReheadTest(unittest.TestCase):
    """A committed report of two scenarios whose summary.json has no rounds,
    cut to one family."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.run = os.path.join(self.tmp.name, "run")
        self.out = os.path.join(self.tmp.name, "out")
        os.makedirs(self.run)
        with open(os.path.join(self.run, "report.md"), "w", encoding="utf-8") as f:
            f.write(OLD_REPORT)
        for png in ("memory.png", "block035.png"):
            with open(os.path.join(self.run, png), "wb") as f:
                f.write(b"png")
        rows = [{"scenario": s, "variant": "v", "driver": "rnull", "job": "", "iops_mean": 1.0}
                for s in ("memory", "block035")]
        verd = {"block035": [{"check": "fast_ge_slow", "pass": False, "text": "rnull/none: F"},
                             {"check": "fast_ge_slow", "pass": True, "text": "rnull/fair: P"}]}
        meta = {"date": "2026-01-01T00:00:00Z", "guest_cpus": 2, "checkout": "/local/path",
                "host": "2 cores, QEMU TCG (multi-threaded)",
                "scenarios": {"memory": {"title": "Memory"}, "block035": {"title": "b"}}}
        synthetic_fixture.write_json(os.path.join(self.run, "meta.json"), meta)
        synthetic_fixture.write_json(os.path.join(self.run, "summary.json"), {
            "meta": meta, "rows": rows, "verdicts": verd, "plots": {}, "warnings": [],
            "policy_switch": []})
        with open(os.path.join(self.run, "summary.csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=["scenario", "variant"])
            w.writeheader()
            w.writerows({"scenario": r["scenario"], "variant": "v"} for r in rows)
        self.how = refile.refile(self.run, "block035", self.out)
        self.md = read(os.path.join(self.out, "report.md"))

    def tearDown(self):
        self.tmp.cleanup()

    def test_cut_to_the_family(self):
        self.assertNotEqual(self.how, "again")
        self.assertIn("(`block035`)", self.md)
        self.assertNotIn("(`memory`)", self.md)
        self.assertNotIn("memory table", self.md)
        self.assertIn("block035/none/rnull: something else", self.md)
        self.assertNotIn("memory/write/rnull", self.md)
        self.assertEqual(sorted(f for f in os.listdir(self.out) if f.endswith(".png")),
                         ["block035.png"])

    def test_header_and_summary(self):
        self.assertIn("- **Scenarios:** `block035`", self.md)
        self.assertIn("- **Commit:** not recorded in meta.json", self.md)
        self.assertIn("- **Clock:** wall", self.md)
        self.assertIn("- **Host, QEMU:** 2 cores, QEMU TCG (multi-threaded)", self.md)
        self.assertIn("not judged again: its summary.json was written before", self.md)
        self.assertIn("IOPS are mean ± sample stdev over rounds.", self.md)
        self.assertIn("**Verdict summary:** 1/2 checks pass.", self.md)
        self.assertEqual(self.md.count("**Verdict summary:**"), 1)

    def test_index(self):
        results = os.path.join(self.tmp.name, "results")
        refile.refile(self.run, "block035", os.path.join(results, "block035"))
        synthetic_fixture.generate_policies(os.path.join(self.tmp.name, "raw"), rounds=1,
                                            policies=("fair", "borrow"))
        quiet(report.generate, os.path.join(self.tmp.name, "raw"),
              os.path.join(results, "policies"), plots=False, family="policies")
        md = read(index.write_index(results))
        rows = [ln for ln in md.split("\n") if ln.startswith("| [")]
        self.assertEqual(len(rows), 2)
        self.assertTrue(rows[0].startswith("| [block035](block035/report.md) | `block035` | "
                                           "not recorded | wall | 2026-01-01 |"), rows[0])
        self.assertIn("1/2 pass (as written)", rows[0])
        self.assertTrue(rows[1].startswith("| [policies](policies/report.md) **SYNTHETIC** |"))
        self.assertIn("(judged)", rows[1])

    def test_data_files(self):
        meta = load(os.path.join(self.out, "meta.json"))
        self.assertNotIn("checkout", meta)
        self.assertIn("commit", meta)
        self.assertIsNone(meta["commit"])
        self.assertEqual(list(meta["scenarios"]), ["block035"])
        summ = load(os.path.join(self.out, "summary.json"))
        self.assertEqual({r["scenario"] for r in summ["rows"]}, {"block035"})
        self.assertNotIn("checkout", summ["meta"])
        with open(os.path.join(self.out, "summary.csv"), newline="", encoding="utf-8") as f:
            self.assertEqual([r["scenario"] for r in csv.DictReader(f)], ["block035"])


if __name__ == "__main__":
    unittest.main()
