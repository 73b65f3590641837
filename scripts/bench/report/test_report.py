"""Tests for report.py (plain unittest).

    /usr/bin/python3 -m unittest discover -s scripts/bench/report -v

PNG checks are skipped when matplotlib is not importable.
"""

import contextlib
import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fake_results  # noqa: E402
import report  # noqa: E402

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False

EXPECTED_PNGS = [
    "peak.png", "qd_sweep_iops.png", "qd_sweep_latency.png", "shared_tags.png",
    "memory.png", "starvation.png", "hotpath.png", "fairness.png",
    "block035.png", "slices.png", "slice_clock.png", "slice_single.png", "slice_cost.png", "policy_switch.png",
]


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return {(r["scenario"], r["variant"], r["driver"], r["job"]): r
                for r in csv.DictReader(f)}


def quiet(fn, *a, **kw):
    """Run fn with stderr captured (warnings are expected in some tests)."""
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        res = fn(*a, **kw)
    return res, buf.getvalue()


class FullTreeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.results = os.path.join(cls.tmp.name, "results")
        cls.out = os.path.join(cls.tmp.name, "out")
        fake_results.generate(cls.results, rounds=3, seed=7)
        cls.res, cls.stderr = quiet(report.generate, cls.results, cls.out, plots=HAVE_MPL)
        cls.csv = read_csv(os.path.join(cls.out, "summary.csv"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_no_warnings_on_clean_tree(self):
        self.assertEqual(self.res["warnings"], [], self.stderr)

    def test_peak_stats_and_ratio(self):
        r = self.csv[("peak", "qd32", "rnull", "")]
        self.assertEqual(int(r["n"]), 3)
        self.assertAlmostEqual(float(r["iops_mean"]), 310000, places=3)
        self.assertAlmostEqual(float(r["iops_stdev"]), 10000, places=3)
        self.assertAlmostEqual(float(r["iops_min"]), 300000)
        self.assertAlmostEqual(float(r["iops_max"]), 320000)
        self.assertEqual(r["ref"], "null_blk")
        ratio = 310000 / 340000
        spread = ratio * math.sqrt((10000 / 310000) ** 2 + (10000 / 340000) ** 2)
        self.assertAlmostEqual(float(r["ratio"]), ratio, places=5)
        self.assertAlmostEqual(float(r["ratio_spread"]), spread, places=5)
        ref = self.csv[("peak", "qd32", "null_blk", "")]
        self.assertAlmostEqual(float(ref["ratio"]), 1.0)
        self.assertAlmostEqual(float(ref["ratio_spread"]), 0.0)

    def test_all_rows_present(self):
        scen = {k[0] for k in self.csv}
        self.assertEqual(scen, {"peak", "qd_sweep", "shared_tags", "memory", "starvation",
                                "hotpath", "fairness", "block035", "slices",
                                "slice_clock", "slice_single", "slice_cost"})
        self.assertEqual(len([k for k in self.csv if k[0] == "qd_sweep"]), 7 * 3)
        self.assertEqual(len([k for k in self.csv if k[0] == "slices"]), 3 * 3 * 4)
        for k, r in self.csv.items():
            self.assertEqual(int(r["n"]), 3, k)

    def test_qd_sweep_latency_columns(self):
        r = self.csv[("qd_sweep", "qd8", "null_blk", "")]
        for col in ("p50_ns", "p99_ns", "p999_ns"):
            self.assertGreater(float(r[col]), 0)
        self.assertLess(float(r["p50_ns"]), float(r["p99_ns"]))
        self.assertLess(float(r["p99_ns"]), float(r["p999_ns"]))

    def test_memory_write_counts_write_iops(self):
        r = self.csv[("memory", "write", "rnull", "")]
        self.assertGreater(float(r["iops_mean"]), 50000)

    def test_hotpath_reference_is_tags_off(self):
        r = self.csv[("hotpath", "borrow", "rnull", "")]
        self.assertEqual(r["ref"], "rnull/tags-off")
        ratio = 382000 / 404000
        spread = ratio * math.sqrt((2000 / 382000) ** 2 + (4000 / 404000) ** 2)
        self.assertAlmostEqual(float(r["ratio"]), ratio, places=5)
        self.assertAlmostEqual(float(r["ratio_spread"]), spread, places=5)
        v = {x["variant"]: x for x in self.res["verdicts"]["hotpath"]}
        self.assertTrue(v["fair"]["within_spread"])      # |-2000| <= sqrt(4000²+4000²)
        self.assertFalse(v["borrow"]["within_spread"])   # |-22000| > sqrt(2000²+4000²)
        self.assertAlmostEqual(v["borrow"]["diff"], -22000)

    def test_slices_reference_is_ts0_same_jobs(self):
        r = self.csv[("slices", "seqread-ts250-j8", "rnull", "")]
        self.assertEqual(r["ref"], "rnull/seqread-ts0-j8")
        self.assertAlmostEqual(float(r["ratio"]), 1.5)
        self.assertEqual(self.csv[("slice_clock", "completion-j8", "rnull", "")]["ref"],
                         "rnull/ts0-j8")

    def test_slice_verdicts(self):
        v = self.res["verdicts"]["slices"]
        gain = {x["workload"]: x["pass"] for x in v if x["check"] == "gain"}
        self.assertEqual(gain, {"seqread": True, "seqwrite": False})   # 1.5, 1.4
        single = {(x["workload"], x["ts"]): x["pass"] for x in v if x["check"] == "single_job"}
        self.assertEqual(single, {("seqread", 250): True, ("seqread", 1000): False,
                                  ("seqwrite", 250): True, ("seqwrite", 1000): True})
        random = {(x["ts"], x["jobs"]): x["pass"] for x in v if x["check"] == "random"}
        self.assertEqual(len(random), 2 * 4)
        self.assertEqual([k for k, ok in random.items() if not ok], [(1000, 8)])
        cfq = [x for x in v if x["check"] == "cfq_level"]
        self.assertEqual(len(cfq), 1)
        self.assertEqual(cfq[0]["ts"], 1000)
        self.assertAlmostEqual(cfq[0]["value"], 0.72)
        self.assertTrue(cfq[0]["pass"])

    def test_slice_single_verdicts(self):
        v = {x["variant"]: x["pass"] for x in self.res["verdicts"]["slice_single"]}
        self.assertEqual(v, {"seqread-ts250": True, "seqread-ts1000": False})  # 0.99, 0.96
        self.assertEqual(self.csv[("slice_single", "seqread-ts1000", "rnull", "")]["ref"],
                         "rnull/seqread-ts0")

    def test_slice_cost_verdicts(self):
        v = {x["variant"]: x for x in self.res["verdicts"]["slice_cost"]}
        self.assertEqual(set(v), {"qd1-ts250", "qd32-ts250"})
        self.assertTrue(v["qd32-ts250"]["within_spread"])
        self.assertFalse(v["qd1-ts250"]["within_spread"])
        self.assertEqual(self.csv[("slice_cost", "qd32-null_blk", "null_blk", "")]["ref"],
                         "rnull/qd32-ts0")

    def test_herrmann_layout(self):
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            md = f.read()
        self.assertIn("| jobs | time_slice_us=0 | time_slice_us=250 | time_slice_us=1000 |", md)
        self.assertIn("| 8 | 100.0 (0.0) | 150.0 (0.0) | 720.0 (0.0) |", md)

    def test_starvation_ctx_per_io(self):
        r = self.csv[("starvation", "depth16", "rnull", "")]
        self.assertAlmostEqual(float(r["ctx_per_io"]), 0.1, places=6)

    def test_fairness_per_job_and_verdicts(self):
        self.assertIn(("fairness", "borrow", "rnull", "A"), self.csv)
        self.assertIn(("fairness", "borrow", "rnull", "B"), self.csv)
        a = self.csv[("fairness", "borrow", "rnull", "A")]
        self.assertAlmostEqual(float(a["iops_mean"]), 100000)
        self.assertEqual(a["ratio"], "")  # no null_blk in this scenario
        v = self.res["verdicts"]["fairness"]
        ab = [x for x in v if x["check"] == "A_borrow_over_fair"][0]
        self.assertAlmostEqual(ab["value"], 2.0)
        self.assertTrue(ab["pass"])
        lat = {x["policy"]: x["pass"] for x in v if x["check"] == "B_latency"}
        self.assertEqual(lat, {"none": False, "fair": True, "borrow": True, "lend": True})

    def test_block035_verdicts(self):
        v = {x["policy"]: x["pass"] for x in self.res["verdicts"]["block035"]}
        self.assertEqual(v, {"none": False, "fair": True, "borrow": True, "lend": True})

    def test_policy_switch_segments(self):
        tls = self.res["timelines"]
        self.assertEqual(len(tls), 1)
        segs = {s["policy"]: s for s in tls[0].segments}
        self.assertEqual(list(segs), ["fair", "borrow", "lend", "none"])
        self.assertAlmostEqual(segs["borrow"]["jobs"]["A"], 100000, delta=5000)
        self.assertAlmostEqual(segs["fair"]["jobs"]["A"], 50000, delta=2500)

    def test_json_matches_csv(self):
        with open(os.path.join(self.out, "summary.json"), encoding="utf-8") as f:
            obj = json.load(f)
        self.assertEqual(len(obj["rows"]), len(self.csv))
        self.assertEqual(obj["meta"]["rounds"], 3)
        row = [r for r in obj["rows"] if (r["scenario"], r["variant"], r["driver"])
               == ("peak", "qd32", "rnull")][0]
        self.assertAlmostEqual(row["iops_stdev"], 10000)

    def test_report_md(self):
        path = os.path.join(self.out, "report.md")
        self.assertTrue(os.path.isfile(path))
        with open(path, encoding="utf-8") as f:
            md = f.read()
        for s in ("# rnull benchmark report", "6.12.117", "2 vCPU", "make bench",
                  "20m 34s", "(`peak`)", "(`fairness`)", "within spread",
                  "outside spread", "**PASS**", "**FAIL**", "310.0k ± 10.0k"):
            self.assertIn(s, md)
        if HAVE_MPL:
            for png in EXPECTED_PNGS:
                self.assertIn(f"]({png})", md)

    @unittest.skipUnless(HAVE_MPL, "matplotlib not available")
    def test_pngs_exist(self):
        for png in EXPECTED_PNGS:
            p = os.path.join(self.out, png)
            self.assertTrue(os.path.isfile(p), png)
            with open(p, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", png)
            self.assertGreater(os.path.getsize(p), 5000, png)


class RobustnessTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.join(self.tmp.name, "results")
        self.out = os.path.join(self.tmp.name, "out")

    def tearDown(self):
        self.tmp.cleanup()

    def put(self, rel, obj):
        p = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj))

    def test_missing_and_broken_inputs(self):
        J = fake_results.fio_job
        D = fake_results.fio_doc
        # no meta.json; peak with rnull only (no reference driver)
        self.put("peak/qd1/rnull/r1.json", D([J("p", read_iops=1000)]))
        self.put("peak/qd1/rnull/r2.json", "this is not json")
        self.put("peak/qd1/rnull/r3.json", {"fio version": "fio-3.33"})   # no jobs
        self.put("peak/qd1/rnull/r4.json", D([{"jobname": "p"}]))        # no read/write
        # fio warning text before the JSON must be tolerated
        self.put("peak/qd32/rnull/r1.json",
                 "fio: some warning\n" + json.dumps(D([J("p", read_iops=2000)])))
        # fairness without completion_us, missing job B and policy fair
        self.put("fairness/borrow/rnull/r1.json", D([J("A", read_iops=5)]))
        # block035 with one job only
        self.put("block035/fair/rnull/r1.json", D([J("fast", read_iops=5)]))
        # hotpath without tags-off
        self.put("hotpath/fair/rnull/r1.json", D([J("h", read_iops=5)]))
        # policy_switch log without switches.txt, with a garbage line
        self.put("policy_switch/timeline/rnull/A_iops.1.log",
                 "1000, 5, 0, 4096, 0\nfoo, bar\n2000, 6, 0, 4096, 0\n")
        # an unknown scenario and a stray file
        self.put("weird/v1/rnull/r1.json", D([J("w", read_iops=7)]))
        self.put("stray.txt", "x")
        res, err = quiet(report.generate, self.root, self.out, plots=HAVE_MPL)
        self.assertTrue(res["warnings"])
        self.assertIn("warning", err)
        rows = read_csv(os.path.join(self.out, "summary.csv"))
        qd1 = rows[("peak", "qd1", "rnull", "")]
        # r1 and r4 parse (r4 with 0 IOPS and a warning); r2, r3 are skipped
        self.assertEqual(int(qd1["n"]), 2)
        self.assertEqual(qd1["ratio"], "")
        self.assertEqual(float(rows[("peak", "qd32", "rnull", "")]["iops_mean"]), 2000)
        self.assertEqual(int(rows[("peak", "qd32", "rnull", "")]["n"]), 1)
        self.assertEqual(float(rows[("peak", "qd32", "rnull", "")]["iops_stdev"]), 0)
        self.assertIn(("weird", "v1", "rnull", ""), rows)
        for name in ("report.md", "summary.json", "summary.csv"):
            self.assertTrue(os.path.isfile(os.path.join(self.out, name)))
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            self.assertIn("## Warnings", f.read())
        if HAVE_MPL:
            self.assertTrue(os.path.isfile(os.path.join(self.out, "peak.png")))
            self.assertTrue(os.path.isfile(os.path.join(self.out, "policy_switch.png")))
            self.assertFalse(os.path.exists(os.path.join(self.out, "qd_sweep_iops.png")))

    def test_empty_results_dir(self):
        os.makedirs(self.root)
        res, _ = quiet(report.generate, self.root, self.out)
        self.assertEqual(res["rows"], [])
        self.assertTrue(os.path.isfile(os.path.join(self.out, "report.md")))

    def test_group_sum_over_jobs(self):
        J = fake_results.fio_job
        self.put("starvation/depth64/rnull/r1.json", fake_results.fio_doc([
            J("a", read_iops=100, ctx=30, read_ios=100),
            J("b", read_iops=50, write_iops=25, ctx=20, read_ios=100, write_ios=50)]))
        res, _ = quiet(report.generate, self.root, self.out, plots=False)
        r = res["rows"][0]
        self.assertAlmostEqual(r["iops_mean"], 175)
        self.assertAlmostEqual(r["ctx_per_io"], 50 / 250)


class CliTest(unittest.TestCase):
    def test_help(self):
        p = subprocess.run([sys.executable, os.path.join(HERE, "report.py"), "--help"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertIn("RESULTS", p.stdout)
        self.assertIn("OUTDIR", p.stdout)

    def test_missing_results_dir(self):
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([sys.executable, os.path.join(HERE, "report.py"),
                                os.path.join(d, "nope"), os.path.join(d, "out")],
                               capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("not a directory", p.stderr)


if __name__ == "__main__":
    unittest.main()
