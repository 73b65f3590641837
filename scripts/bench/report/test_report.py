"""Tests for the report generator and compare.py (plain unittest).

    /usr/bin/python3 -m unittest discover -s scripts/bench/report -v

PNG checks are skipped when matplotlib is not importable; the scipy
comparison of the built-in t distribution when scipy is not.
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
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import compare  # noqa: E402
import synthetic_fixture  # noqa: E402
import report  # noqa: E402
import stats  # noqa: E402
import verdicts  # noqa: E402

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


def read_csv(path, with_cpus=False):
    """{(scenario, variant, driver, job): row}, keyed by cpus first with
    with_cpus."""
    with open(path, newline="", encoding="utf-8") as f:
        return {((int(r["cpus"]),) if with_cpus else ())
                + (r["scenario"], r["variant"], r["driver"], r["job"]): r
                for r in csv.DictReader(f)}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def table_captions(md):
    """For each markdown table, the nearest non-empty line above it."""
    lines = md.split("\n")
    out = []
    for i, ln in enumerate(lines):
        if ln.startswith("|---"):
            j = i - 2
            while j >= 0 and not lines[j].strip():
                j -= 1
            out.append(lines[j] if j >= 0 else "")
    return out


def quiet(fn, *a, **kw):
    """Run fn with stderr captured (warnings are expected in some tests)."""
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        res = fn(*a, **kw)
    return res, buf.getvalue()


class GeneratedTree(unittest.TestCase):
    """A fake RESULTS tree written by write(results) and its report, made
    once per class: cls.results, cls.out, cls.res, cls.stderr, cls.md."""

    @classmethod
    def make(cls, write, plots):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.results = os.path.join(cls.tmp.name, "results")
        cls.out = os.path.join(cls.tmp.name, "out")
        write(cls.results)
        cls.res, cls.stderr = quiet(report.generate, cls.results, cls.out, plots=plots)
        cls.md = read(os.path.join(cls.out, "report.md"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()


class FullTreeTest(GeneratedTree):
    @classmethod
    def setUpClass(cls):
        cls.make(lambda d: synthetic_fixture.generate(d, rounds=3, seed=7), HAVE_MPL)
        cls.csv = read_csv(os.path.join(cls.out, "summary.csv"))

    def test_no_warnings_on_clean_tree(self):
        self.assertEqual(self.res["warnings"], [], self.stderr)

    def test_peak_ratio_ci_and_welch(self):
        r = self.csv[("peak", "qd32", "rnull", "")]
        # delta method on the log means: ua = 1e8/(3·310000²), ub = 1e8/(3·340000²),
        # df = (ua+ub)²/(ua²/2 + ub²/2) = 3.9663, t(0.975, 3.9663) = 2.7809
        self.assertAlmostEqual(float(r["ratio_df"]), 3.96635, places=4)
        self.assertAlmostEqual(float(r["ratio_ci_lo"]), 0.849945, places=5)
        self.assertAlmostEqual(float(r["ratio_ci_hi"]), 0.978081, places=5)
        # Welch: t = -30000/√(2e8/3) = -3.674235, df = 4; closed-form t(4) cdf
        t = 30000 / math.sqrt(2e8 / 3)
        u = t / math.sqrt(1 + t * t / 4)
        p = 2 * (0.5 - 0.375 * u * (1 - (t * t / (1 + t * t / 4)) / 12))
        self.assertAlmostEqual(float(r["ratio_p"]), p, places=5)
        self.assertAlmostEqual(p, 0.0213116, places=6)
        # round-paired ratios: 300/330, 310/340, 320/350
        self.assertAlmostEqual(float(r["ratio_rmin"]), 300 / 330, places=5)
        self.assertAlmostEqual(float(r["ratio_rmax"]), 320 / 350, places=5)

    def test_cpus_and_meta_copy(self):
        self.assertEqual({r["cpus"] for r in self.csv.values()}, {"2"})   # meta guest_cpus
        meta = json.loads(read(os.path.join(self.out, "meta.json")))
        self.assertEqual(meta["kernel"], "none (synthetic)")
        self.assertIs(meta["synthetic"], True)
        self.assertEqual(self.res["clock"], "wall")
        self.assertEqual(self.res["peak_matrix"], [])   # old peak variants qd1/qd32

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
        # wall clock (no clock in meta.json): the ratio's 95% CI decides
        self.assertEqual(v["fair"]["outcome"], "indistinguishable")   # CI contains 1
        self.assertEqual(v["borrow"]["outcome"], "lower")             # CI below 1
        self.assertLess(v["borrow"]["ci_hi"], 1.0)
        self.assertLess(v["fair"]["ci_lo"], 1.0)
        self.assertGreater(v["fair"]["ci_hi"], 1.0)
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
        # seqread 1.5; seqwrite (1.4) is not judged: the gain is a read target
        self.assertEqual(gain, {"seqread": True})
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
        self.assertEqual(v["qd32-ts250"]["outcome"], "indistinguishable")
        self.assertEqual(v["qd1-ts250"]["outcome"], "lower")
        self.assertEqual(self.csv[("slice_cost", "qd32-null_blk", "null_blk", "")]["ref"],
                         "rnull/qd32-ts0")

    def test_herrmann_layout(self):
        md = self.md
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
        self.assertEqual(obj["clock"], "wall")
        row = [r for r in obj["rows"] if (r["scenario"], r["variant"], r["driver"])
               == ("peak", "qd32", "rnull")][0]
        self.assertAlmostEqual(row["iops_stdev"], 10000)

    def test_report_md(self):
        path = os.path.join(self.out, "report.md")
        self.assertTrue(os.path.isfile(path))
        with open(path, encoding="utf-8") as f:
            md = f.read()
        for s in ("# rnull benchmark report", "none (synthetic)", "2 vCPU", "synthetic_fixture.py",
                  "20m 34s", "(`peak`)", "(`fairness`)", "**Clock:** wall",
                  "## What this clock cannot show (wall)",
                  "no difference resolved (95% CI contains 1)", "lower (95% CI below 1)",
                  "**PASS**", "**FAIL**", "310.0k ± 10.0k", "95% CI, Welch p"):
            self.assertIn(s, md)
        for s in ("within spread", "outside spread"):
            self.assertNotIn(s, md)
        caps = table_captions(md)
        self.assertGreater(len(caps), 10)
        for c in caps:
            self.assertIn("wall clock", c)
        if HAVE_MPL:
            for png in EXPECTED_PNGS:
                self.assertEqual(md.count(f"]({png})"), 1, png)

    @unittest.skipUnless(HAVE_MPL, "matplotlib not available")
    def test_pngs_exist(self):
        for png in EXPECTED_PNGS:
            p = os.path.join(self.out, png)
            self.assertTrue(os.path.isfile(p), png)
            with open(p, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", png)
            self.assertGreater(os.path.getsize(p), 5000, png)


class StatsTest(unittest.TestCase):
    """Against values computed by hand (and the t tables)."""

    A, B = [10, 12, 14], [8, 9, 10]   # means 12 and 9, variances 4 and 1

    def test_welch(self):
        w = stats.welch(self.A, self.B)
        self.assertAlmostEqual(w["t"], 3 / math.sqrt(4 / 3 + 1 / 3), places=12)   # 2.32379
        self.assertAlmostEqual(w["df"], 50 / 17, places=12)   # (5/3)² / ((4/3)²/2 + (1/3)²/2)
        self.assertAlmostEqual(w["p"], 0.104479, places=5)
        self.assertIsNone(stats.welch([1], [1, 2]))
        self.assertEqual(stats.welch([5, 5], [5, 5])["p"], 1.0)
        self.assertEqual(stats.welch([5, 5], [6, 6])["p"], 0.0)

    def test_ratio_ci_delta_method(self):
        lo, hi, df = stats.ratio_ci(self.A, self.B)
        ua, ub = 4 / (3 * 144), 1 / (3 * 81)
        self.assertAlmostEqual(df, (ua + ub) ** 2 / (ua ** 2 / 2 + ub ** 2 / 2), places=9)
        self.assertAlmostEqual(df, 3.484536, places=6)
        self.assertAlmostEqual(lo, 0.948345, places=5)
        self.assertAlmostEqual(hi, 1.874611, places=5)
        self.assertAlmostEqual(math.sqrt(lo * hi), 12 / 9, places=9)   # symmetric in log
        self.assertIsNone(stats.ratio_ci([1], [1, 2]))
        self.assertEqual(stats.ratio_ci([4, 4], [2, 2]), (2.0, 2.0, None))

    def test_t_quantile_builtin_known_values(self):
        for p, df, t in ((0.975, 4, 2.776445), (0.975, 10, 2.228139), (0.995, 1, 63.656741),
                         (0.95, 30, 1.697261), (0.975, 1e6, 1.959966)):
            self.assertAlmostEqual(stats.t_ppf_builtin(p, df), t, places=5, msg=(p, df))
            self.assertAlmostEqual(stats.t_ppf_builtin(1 - p, df), -t, places=5)
        self.assertEqual(stats.t_ppf_builtin(0.5, 3), 0.0)
        # df = 1 is Cauchy: P(T > 2) = 1/2 − atan(2)/π
        self.assertAlmostEqual(stats.t_sf_builtin(2.0, 1), 0.5 - math.atan(2) / math.pi, places=12)
        with self.assertRaises(ValueError):
            stats.t_ppf_builtin(1.0, 4)

    def test_fallback_without_scipy(self):
        with mock.patch.object(stats, "_scipy_t", None):
            self.assertAlmostEqual(stats.t_ppf(0.975, 4), 2.776445, places=5)
            w = stats.welch(self.A, self.B)
            lo, hi, _ = stats.ratio_ci(self.A, self.B)
        self.assertAlmostEqual(w["p"], 0.104479, places=5)
        self.assertAlmostEqual(lo, 0.948345, places=5)
        self.assertAlmostEqual(hi, 1.874611, places=5)

    def test_builtin_agrees_with_scipy(self):
        try:
            from scipy.stats import t
        except ImportError:
            self.skipTest("scipy not available")
        for df in (1, 2.5, 4, 9.7, 30, 200):
            for p in (0.6, 0.9, 0.975, 0.999):
                self.assertAlmostEqual(stats.t_ppf_builtin(p, df), t.ppf(p, df),
                                       delta=1e-7 * abs(t.ppf(p, df)))
            for x in (0.3, 1.5, 4.0):
                self.assertAlmostEqual(stats.t_sf_builtin(x, df), t.sf(x, df), places=10)

    def test_round_ratio_range_pairs_rounds(self):
        # rounds 1 and 2 of a against rounds 1 and 2 of b, listed in another order
        self.assertEqual(stats.round_ratio_range([10, 20], [10, 5], [1, 2], [1, 2]), (1.0, 4.0))
        self.assertEqual(stats.round_ratio_range([10, 20], [5, 10], [1, 2], [2, 1]), (1.0, 4.0))
        self.assertEqual(stats.round_ratio_range([10, 20], [5, 10]), (2.0, 2.0))
        # no common round: the extremes
        self.assertEqual(stats.round_ratio_range([10, 20], [5, 10], [1, 2], [3, 4]), (1.0, 4.0))

    def test_classify_and_peak_threshold(self):
        C = verdicts.classify
        self.assertEqual(C({"ratio": 0.99}, "virtual", 1.0), "below")
        self.assertEqual(C({"ratio": 1.0}, "virtual", 1.0), "above")
        self.assertEqual(C({"ratio": 1.1, "ci_lo": 0.98, "ci_hi": 1.2}, "wall", 1.0), "straddles")
        self.assertEqual(C({"ratio": 1.1, "ci_lo": 1.001, "ci_hi": 1.2}, "wall", 1.0), "above")
        self.assertEqual(C({"ratio": 0.9, "ci_lo": 0.8, "ci_hi": 0.99}, "wall", 1.0), "below")
        self.assertEqual(C({"ratio": 1.1, "ci_lo": None}, "wall", 1.0), "above")   # n < 2
        v = verdicts.target_verdict("x", {"ratio": 0.99}, "virtual", 1.0, "rnull/null_blk",
                                    verdicts.PEAK_WORDS)
        self.assertEqual(v["outcome"], "behind")
        self.assertFalse(v["pass"])
        self.assertTrue(v["text"].endswith("→ **behind**"))


class BootsVirtualTest(GeneratedTree):
    """New layout: boots c1 and c4, peak matrix, virtual clock."""

    @classmethod
    def setUpClass(cls):
        cls.make(lambda d: synthetic_fixture.generate_boots(d, "virtual"), HAVE_MPL)
        cls.csv = read_csv(os.path.join(cls.out, "summary.csv"), with_cpus=True)
        cls.cells = {(c["cpus"], c["variant"]): c for c in cls.res["peak_matrix"]}

    def test_no_warnings(self):
        self.assertEqual(self.res["warnings"], [], self.stderr)
        self.assertEqual(self.res["clock"], "virtual")

    def test_header(self):
        head = self.md.split("\n## ", 1)[0]
        self.assertIn("- **Scenarios:** `peak`, `hotpath`", head)
        self.assertIn("- **Commit:** not recorded in meta.json", head)
        self.assertIn("- **Clock:** virtual (QEMU `-accel tcg -icount", head)
        self.assertIn("- **Host, QEMU:** none: synthetic fixture", head)
        self.assertIn("- **Judged by:** thresholds.py: `PEAK_AHEAD_RATIO` = 1.0, "
                      "`HOST_COST_FLOOR` = 0.99, `VIRTUAL_EQUAL_REL` = 0.001", head)
        self.assertNotIn("CONFIDENCE", head)

    def test_rows_per_boot(self):
        self.assertEqual({k[0] for k in self.csv}, {1, 4})
        self.assertIn((1, "peak", "irq0-qd1", "rnull_mod", ""), self.csv)
        self.assertNotIn((4, "peak", "irq0-qd1", "rnull_mod", ""), self.csv)
        r = self.csv[(4, "peak", "irq0-qd32", "null_blk", "")]
        self.assertAlmostEqual(float(r["iops_mean"]), 200000 * 4 * 1.5, places=2)

    def test_ref_file_gives_null_blk_of_ref_variant(self):
        r = self.csv[(1, "peak", "host-fair-qd1", "rnull", "")]
        self.assertEqual(r["ref"], "null_blk/irq0-qd1")
        self.assertAlmostEqual(float(r["ratio"]), 1.03 * 0.997, places=6)
        c = self.cells[(1, "host-fair-qd1")]
        self.assertEqual(c["ref"], "irq0-qd1")
        self.assertEqual(c["null_blk_variant"], "irq0-qd1")
        self.assertAlmostEqual(c["cost_vs_ref"]["ratio"], 0.997, places=9)
        self.assertIsNone(self.cells[(1, "irq0-qd1")]["cost_vs_ref"])

    def test_matrix_cells(self):
        self.assertEqual(len(self.cells), 2 * 20)
        mod = {k for k, c in self.cells.items() if c["rnull_mod_vs_null_blk"]}
        self.assertEqual(mod, {(1, "irq0-qd1"), (1, "irq0-qd32")})
        st = self.cells[(4, "irq1-qd32")]["rnull_vs_null_blk"]
        self.assertAlmostEqual(st["ratio"], 1.03, places=9)
        # rounds scatter by ±1e-5 in opposite directions for rnull and null_blk
        self.assertAlmostEqual(st["rmin"], 1.03 * (1 - 1e-5) / (1 + 1e-5), places=9)
        self.assertAlmostEqual(st["rmax"], 1.03 * (1 + 1e-5) / (1 - 1e-5), places=9)

    def test_peak_verdicts(self):
        v = self.res["verdicts"]["peak"]
        behind = {x["text"].split(":")[0] for x in v
                  if x["check"] == "rnull_vs_null_blk" and x["outcome"] == "behind"}
        self.assertEqual(behind, {"c1 irq1-qd1", "c4 irq2-qd1"})
        texts = [x["text"] for x in v if not x["pass"]]
        self.assertEqual(len(texts), 3, texts)
        self.assertTrue(any(t.startswith("c1 irq1-qd1: rnull/null_blk = 0.9900") for t in texts))
        host = {x["variant"]: x for x in v if x["check"] == "host_cost" and not x["pass"]}
        self.assertEqual(list(host), ["host-lend-qd32"])
        self.assertEqual(host["host-lend-qd32"]["outcome"], "costs > 1%")
        self.assertEqual(len([x for x in v if x["check"] == "host_cost"]), 2 * 8)
        # Host budget rows are judged by their cost, not against the null_blk
        # of another configuration; time-slice rows (the model off: the same
        # configuration as null_blk's) against null_blk.
        judged = {(x["text"].split(":")[0], x["check"]) for x in v}
        self.assertFalse({t for t, c in judged if c == "rnull_vs_null_blk" and " host-" in t})
        self.assertEqual(len({t for t, c in judged if c == "rnull_vs_null_blk" and " ts" in t}),
                         2 * 2)

    def test_hotpath_relative_difference(self):
        v = self.res["verdicts"]["hotpath"]
        self.assertEqual({(x["cpus"], x["variant"]): x["outcome"] for x in v},
                         {(1, "fair"): "equal", (1, "borrow"): "lower",
                          (4, "fair"): "equal", (4, "borrow"): "lower"})
        self.assertIn("c4: rnull/borrow vs tags-off: -2.00%", self.md)
        self.assertIn("lower by 2.00%", self.md)

    def test_report_md(self):
        for s in ("**Clock:** virtual", "1, 4 vCPU (one boot per vCPU count)",
                  "## What this clock cannot show (virtual)", "Contention between CPUs",
                  "| 1 | host-fair-qd1 | 205.4k ± 2 | 200.0k ± 2 (irq0-qd1) | 1.0269 ",
                  "0.9970 (0.9970–0.9970) vs irq0-qd1", "`irqmode=2 submit_queues=4`",
                  "→ **behind**", "→ **costs > 1%**"):
            self.assertIn(s, self.md)
        self.assertNotIn("95% CI", self.md.split("## What this clock")[1])
        caps = table_captions(self.md)
        self.assertGreaterEqual(len(caps), 4)
        for c in caps:
            self.assertIn("virtual clock", c)

    def test_meta_and_json(self):
        obj = json.loads(read(os.path.join(self.out, "summary.json")))
        self.assertEqual(obj["clock"], "virtual")
        self.assertEqual(len(obj["peak_matrix"]), 40)
        cell = [c for c in obj["peak_matrix"] if (c["cpus"], c["variant"]) == (4, "irq0-qd1")][0]
        self.assertAlmostEqual(cell["rnull"], 824000, places=3)
        meta = json.loads(read(os.path.join(self.out, "meta.json")))
        self.assertEqual(meta["boots"][1]["cpus"], 4)

    @unittest.skipUnless(HAVE_MPL, "matplotlib not available")
    def test_pngs(self):
        self.assertEqual(self.res["plots"]["peak"], ["peak.png"])
        self.assertEqual(self.res["plots"]["hotpath"], ["hotpath_c1.png", "hotpath_c4.png"])
        for png in ("peak.png", "hotpath_c1.png", "hotpath_c4.png"):
            self.assertIn(f"]({png})", self.md)
            self.assertGreater(os.path.getsize(os.path.join(self.out, png)), 5000)


class BootsWallTest(GeneratedTree):
    """The same tree on the wall clock: rounds scatter by ±1 %, the CI decides."""

    @classmethod
    def setUpClass(cls):
        cls.make(lambda d: synthetic_fixture.generate_boots(d, "wall"), False)

    def test_ci_of_ratio(self):
        c = [c for c in self.res["peak_matrix"] if (c["cpus"], c["variant"]) == (1, "irq0-qd1")][0]
        st = c["rnull_vs_null_blk"]
        # rounds m·(0.99, 1, 1.01): variance of each mean 1e-4/3 (relative), df = 4
        h = 2.776445 * math.sqrt(2e-4 / 3)
        self.assertAlmostEqual(st["df"], 4.0, places=9)
        self.assertAlmostEqual(st["ci_lo"], 1.03 * math.exp(-h), places=5)
        self.assertAlmostEqual(st["ci_hi"], 1.03 * math.exp(h), places=5)

    def test_outcomes(self):
        v = self.res["verdicts"]["peak"]
        peak = {(x["text"].split(":")[0]): x["outcome"] for x in v
                if x["check"] == "rnull_vs_null_blk"}
        self.assertEqual(peak["c1 irq0-qd1"], "ahead")               # CI [1.007, 1.054]
        self.assertEqual(peak["c1 irq1-qd1"], "indistinguishable")   # 0.99, CI contains 1
        self.assertEqual(peak["c4 irq2-qd1"], "behind")              # 0.90, CI below 1
        host = {x["outcome"] for x in v if x["check"] == "host_cost"}
        self.assertEqual(host, {"indistinguishable from a 1% cost"})
        self.assertFalse(any(x["pass"] for x in v if x["check"] == "host_cost"))

    def test_report_md(self):
        for s in ("**Clock:** wall", "## What this clock cannot show (wall)",
                  "(target: 95% CI ≥ 1.00) → **behind**", "p<0.001"):
            self.assertIn(s, self.md)

    def test_header_lists_the_wall_clocks_thresholds(self):
        judged = [ln for ln in self.md.split("\n") if ln.startswith("- **Judged by:**")]
        self.assertEqual(len(judged), 1)
        self.assertIn("`HOST_COST_FLOOR` = 0.99", judged[0])
        self.assertIn("`CONFIDENCE` = 0.95", judged[0])
        self.assertNotIn("VIRTUAL_EQUAL_REL", judged[0])
        for c in table_captions(self.md):
            self.assertIn("wall clock", c)


class PoliciesTest(GeneratedTree):
    """Scenario `policies`: the one table, its cells and verdicts
    (synthetic_fixture.generate_policies: 2 rounds, policies none, fair,
    borrow, lend and window)."""

    @classmethod
    def setUpClass(cls):
        cls.make(lambda d: synthetic_fixture.generate_policies(d, rounds=2), HAVE_MPL)
        cls.cells = {(c["sub"], c["policy"]): c for c in cls.res["policies"]}
        cls.v = cls.res["verdicts"]["policies"]

    def verdict(self, check, **kw):
        out = [x for x in self.v if x["check"] == check
               and all(x.get(k) == val for k, val in kw.items())]
        self.assertEqual(len(out), 1, (check, kw, out))
        return out[0]

    def test_no_warnings(self):
        self.assertEqual(self.res["warnings"], [], self.stderr)
        self.assertEqual(self.res["clock"], "virtual")

    def test_header(self):
        head = self.md.split("\n## ", 1)[0]
        self.assertIn("- **Scenarios:** `policies`", head)
        self.assertIn("`BUSCH_KEEP_POLICIES` = ('fair', 'borrow', 'window')", head)
        self.assertIn("`SLOW_HANDOFFS_MAX` = 0", head)
        self.assertNotIn("PEAK_AHEAD_RATIO", head)

    def test_cells(self):
        F = synthetic_fixture
        self.assertEqual(len(self.cells), 6 * 5)
        # table order: sub-scenario, then policy (window after lend)
        self.assertEqual([(c["sub"], c["policy"]) for c in self.res["policies"]][:6],
                         [("kuai", p) for p in F.POLICIES_FAKE] + [("busch", "none")])
        c = self.cells[("busch", "borrow")]
        # rounds scatter by ±1e-4 around the fake means: their mean is exact
        self.assertAlmostEqual(c["busy_iops"], F.POL_HEAVY, places=6)
        self.assertAlmostEqual(c["light_iops"], 2400, places=6)
        self.assertAlmostEqual(c["solo_iops"], F.POL_SOLO, places=6)
        self.assertAlmostEqual(c["light_vs_solo"], 2400 / 2700, places=9)
        self.assertAlmostEqual(c["light_p99_ns"], 480_000, places=3)
        self.assertEqual((c["slow_handoffs"], c["slow_handoffs_max"]), (3, 3))
        self.assertEqual(self.cells[("latencies", "window")]["slow_handoffs_run"], 2)
        s = self.cells[("qd32_split", "lend")]
        self.assertEqual(s["split_jobs"], ["a", "b"])
        self.assertAlmostEqual(s["bw"]["a"], 520 * 2 ** 20, delta=1)   # 128 KiB × IOPS
        self.assertAlmostEqual(s["split"], 480 / 520, places=5)
        self.assertEqual(list(self.cells[("latencies", "fair")]["jobs"]),
                         ["100us", "1ms", "10ms"])
        self.assertIsNone(self.cells[("kuai", "fair")]["light_vs_solo"])   # B has no solo run

    def test_verdicts(self):
        self.assertTrue(self.verdict("kuai_borrow_over_fair")["pass"])
        self.assertAlmostEqual(self.verdict("kuai_borrow_over_fair")["value"], 31000 / 16000,
                               places=9)
        keeps = {x["policy"]: x["pass"] for x in self.v if x["check"] == "busch_keeps"}
        self.assertEqual(keeps, {"fair": True, "borrow": False, "window": True})
        self.assertTrue(self.verdict("busch_loses", policy="none")["pass"])   # 0.111 ≤ 0.8
        self.assertNotIn("pass", self.verdict("busch_info", policy="lend"))    # no target
        split = {x["policy"]: x["pass"] for x in self.v if x["check"] == "split_even"}
        self.assertEqual(split, {"fair": True, "borrow": True, "lend": False, "window": True})
        self.assertNotIn("pass", self.verdict("split_info", policy="none"))
        fast = {x["policy"]: x["pass"] for x in self.v if x["check"] == "block035_fast_ge_slow"}
        self.assertEqual(fast, {"none": False, "fair": True, "borrow": True, "lend": True,
                                "window": True})
        hand = {x["sub"]: x["pass"] for x in self.v if x["check"] == "slow_handoffs"}
        self.assertEqual(hand, {"kuai": True, "busch": False, "qd1_alone": True,
                                "qd32_split": True, "block035": True, "latencies": True})
        self.assertEqual(self.verdict("slow_handoffs", sub="busch")["counts"]["borrow"], 3)
        self.assertEqual(self.verdict("slow_handoffs", sub="latencies")["runs"]["window"], 2)

    def test_report_md(self):
        head = ("| scenario | policy | busy IOPS | light IOPS (/ solo) | light p99 µs | "
                "bandwidth split (min/max) | IOPS per device | slow hand-offs |")
        self.assertEqual(self.md.count(head), 1)   # one table
        for s in ("| Busch | borrow | 14.0k | 2.4k / 2.7k = **0.889** | 480 | – |  | 3 |",
                  "| Axboe b | lend | – | – |  | a 520 / b 480 MiB/s: **0.923** | a 4.2k · b 3.8k | 0 |",
                  "| block/035 | none | – | – |  | – | fast 500 · slow 600 | 0 |",
                  "| three latencies | window | – | – |  | – | 100us 40.0k · 1ms 4.0k · 10ms 400 | 0 (2) |",
                  "| three latencies | lend | – | – |  | – | 100us 40.0k · 1ms 4.0k · 10ms 400 | 0 |",
                  "Busch/borrow: light IOPS / solo = 2.4k / 2.7k = 0.889 (target ≥ 0.9) → **FAIL**",
                  "Busch/none: light IOPS / solo = 300 / 2.7k = 0.111 (must visibly lose: ≤ 0.8) "
                  "→ **PASS**",
                  "Busch: slow hand-offs while I/O runs none 0, fair 0, borrow 3, lend 0, window 0 "
                  "(target: at most 0 in every run) → **FAIL**",
                  "three latencies: slow hand-offs while I/O runs none 0, fair 0, borrow 0, lend 0, "
                  "window 0 (target: at most 0 in every run); whole runs: none 0, fair 0, borrow 0, "
                  "lend 0, window 2 → **PASS**",
                  "three latencies: slow hand-offs over the whole runs, fio's start and end "
                  "included: none 0, fair 0, borrow 0, lend 0, window 2 (target: at most 0) "
                  "→ **FAIL**",
                  "**Verdict summary:** 20/26 checks pass.", "**Clock:** virtual",
                  "<details><summary>All policies runs</summary>"):
            self.assertIn(s, self.md)
        for c in table_captions(self.md):
            self.assertIn("virtual clock", c)
        self.assertIn("IOPS means over 2 rounds", self.md)

    def test_csv_and_json(self):
        rows = read_csv(os.path.join(self.out, "summary.csv"), with_cpus=True)
        r = rows[(2, "policies", "busch-borrow", "rnull", "light")]
        self.assertEqual(r["slow_handoffs"], "3")
        self.assertEqual(r["slow_handoffs_run"], "3")
        w = rows[(2, "policies", "latencies-window", "rnull", "10ms")]
        self.assertEqual((w["slow_handoffs"], w["slow_handoffs_run"]), ("0", "2"))
        self.assertAlmostEqual(float(r["bw_mean"]), 2400 * 512, places=0)
        obj = json.loads(read(os.path.join(self.out, "summary.json")))
        self.assertEqual(len(obj["policies"]), 30)
        self.assertEqual(obj["policies"][0]["variant"], "kuai-none")

    @unittest.skipUnless(HAVE_MPL, "matplotlib not available")
    def test_png(self):
        self.assertEqual(self.res["plots"]["policies"], ["policies.png"])
        self.assertIn("](policies.png)", self.md)
        self.assertGreater(os.path.getsize(os.path.join(self.out, "policies.png")), 5000)


class PoliciesEdgeTest(synthetic_fixture.ResultsDirCase):
    """Policies the report has no target for, missing solo runs and
    broken hand-off files."""

    def test_unknown_policy_and_missing_solo(self):
        # "fifo": a policy the report does not know; its busch has no solo run
        synthetic_fixture.generate_policies(self.root, rounds=1, policies=("fair", "fifo"),
                                       handoffs={("kuai-fifo", 1): 2})
        solo = os.path.join(self.root, "c2", "policies", "qd1_alone-fifo")
        for f in os.listdir(os.path.join(solo, "rnull")):
            os.remove(os.path.join(solo, "rnull", f))
        res, _ = quiet(report.generate, self.root, self.out, plots=False)
        self.assertTrue(any("no solo run (qd1_alone-fifo" in w for w in res["warnings"]))
        cells = [(c["sub"], c["policy"]) for c in res["policies"]]
        self.assertEqual(cells[:2], [("kuai", "fair"), ("kuai", "fifo")])   # unknown last
        v = res["verdicts"]["policies"]
        self.assertFalse([x for x in v if x.get("policy") == "fifo" and x["check"] in
                          ("busch_keeps", "busch_loses", "busch_info")])
        # Axboe b is judged under every policy but none, fifo included
        self.assertTrue([x for x in v if x.get("policy") == "fifo" and x["check"] == "split_even"])
        # no borrow run: no Kuai verdict, and a warning says why
        self.assertFalse([x for x in v if x["check"] == "kuai_borrow_over_fair"])
        self.assertTrue(any("'borrow' and 'fair'" in w for w in res["warnings"]))
        hand = [x for x in v if x["check"] == "slow_handoffs" and x["sub"] == "kuai"][0]
        self.assertFalse(hand["pass"])

    def test_handoff_files(self):
        synthetic_fixture.generate_policies(self.root, rounds=2, policies=("fair",))
        d = os.path.join(self.root, "c2", "policies")
        with open(os.path.join(d, "kuai-fair", "rnull", "r1.handoffs"), "w") as f:
            f.write("many\n")
        with open(os.path.join(d, "busch-fair", "rnull", "r2.handoffs"), "w") as f:
            f.write("-1\n")
        for r in (1, 2):
            os.remove(os.path.join(d, "block035-fair", "rnull", f"r{r}.handoffs"))
        res, _ = quiet(report.generate, self.root, self.out, plots=False)
        w = "\n".join(res["warnings"])
        self.assertIn("expected an integer, got 'many'", w)
        self.assertIn("negative count -1", w)
        self.assertIn("block035-fair: no slow hand-off counts", w)
        cells = {c["sub"]: c for c in res["policies"]}
        self.assertEqual(cells["kuai"]["slow_handoffs"], 0)   # round 2 only
        self.assertEqual(cells["busch"]["slow_handoffs"], 0)  # round 1 only
        self.assertIsNone(cells["block035"]["slow_handoffs"])
        md = read(os.path.join(self.out, "report.md"))
        self.assertIn("| block/035 | fair | – | – |  | – | fast 30.0k · slow 320 | – |", md)
        hand = {x["sub"] for x in res["verdicts"]["policies"] if x["check"] == "slow_handoffs"}
        self.assertNotIn("block035", hand)


class CompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.runs = {}
        for name, tweak in (("a", None), ("b", {(4, "irq0-qd32", "rnull"): 1.004}),
                            ("c", {(1, "mem-read-qd1", "null_blk"): 0.99})):
            res = os.path.join(cls.tmp.name, name)
            synthetic_fixture.generate_boots(res, "virtual", tweak=tweak)
            quiet(report.generate, res, res + "-out", plots=False)
            cls.runs[name] = res + "-out"

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_same_run(self):
        lines, s = compare.compare(self.runs["a"], self.runs["a"])
        self.assertEqual(s["iops_max_rel"], 0.0)
        self.assertTrue(s["agree"])
        self.assertEqual(s["rows"], 68)

    def test_small_difference_agrees(self):
        lines, s = compare.compare(self.runs["a"], self.runs["b"])
        self.assertAlmostEqual(s["iops_max_rel"], 0.004, places=9)
        self.assertAlmostEqual(s["ratio_max_rel"], 0.004, places=9)
        self.assertTrue(s["agree"])
        md = "\n".join(lines)
        self.assertIn("| 4 | peak | irq0-qd32 | rnull | 1,236,000.0 | 1,240,944.0 | +0.400% |", md)
        self.assertIn("runs agree within 0.5%: **yes**", md)

    def test_ratio_difference_disagrees(self):
        _, s = compare.compare(self.runs["a"], self.runs["c"])
        # null_blk 1 % lower: the ratio rnull/null_blk is 1/0.99 − 1 higher
        self.assertAlmostEqual(s["ratio_max_rel"], 1 / 0.99 - 1, places=9)
        self.assertAlmostEqual(s["iops_max_rel"], 0.01, places=9)
        self.assertFalse(s["agree"])

    def test_old_summary_without_cpus(self):
        with tempfile.TemporaryDirectory() as d:
            synthetic_fixture.generate(os.path.join(d, "r"), rounds=3, seed=7)
            quiet(report.generate, os.path.join(d, "r"), os.path.join(d, "o"), plots=False)
            obj = json.loads(read(os.path.join(d, "o", "summary.json")))
            for r in obj["rows"]:
                del r["cpus"]            # as in summaries written before boots
            with open(os.path.join(d, "o", "summary.json"), "w") as f:
                json.dump(obj, f)
            lines, s = compare.compare(os.path.join(d, "o"), os.path.join(d, "o"))
        self.assertIn("| 2 | peak | qd32 | rnull |", "\n".join(lines))
        self.assertTrue(s["agree"])

    def test_cli_exit_zero(self):
        p = subprocess.run([sys.executable, os.path.join(HERE, "compare.py"),
                            self.runs["a"], self.runs["c"]], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertIn("runs agree within 0.5%: **no**", p.stdout)
        p = subprocess.run([sys.executable, os.path.join(HERE, "compare.py"),
                            self.runs["a"], os.path.join(self.tmp.name, "nope")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertIn("error", p.stderr)


class RobustnessTest(synthetic_fixture.ResultsDirCase):
    def put(self, rel, obj):
        p = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj))

    def test_missing_and_broken_inputs(self):
        J = synthetic_fixture.fio_job
        D = synthetic_fixture.fio_doc
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

    def test_new_layout_problems(self):
        J, D = synthetic_fixture.fio_job, synthetic_fixture.fio_doc
        self.put("meta.json", {"clock": "sundial", "boots": [{"cpus": 2, "scenarios": ["peak"]},
                                                              {"cpus": 8, "scenarios": ["peak"]}]})
        self.put("c2/peak/irq0-qd1/rnull/r1.json", D([J("p", read_iops=100)]))
        self.put("c2/peak/irq0-qd1/null_blk/r1.json", D([J("p", read_iops=90)]))
        self.put("c2/peak/irq0-qd1/params", "rnull irqmode=0\nnull_blk: irqmode=0\n")
        self.put("c2/peak/host-fair-qd1/rnull/r1.json", D([J("p", read_iops=95)]))
        self.put("c2/peak/host-fair-qd1/ref", "irq9-qd1\n")      # no such variant
        res, _ = quiet(report.generate, self.root, self.out, plots=False)
        w = "\n".join(res["warnings"])
        self.assertIn("clock 'sundial'", w)
        self.assertIn("8 vCPUs", w)                        # boot listed, directory missing
        self.assertIn("expected '<driver>: <module params>'", w)
        self.assertIn("host cost not checked", w)
        self.assertEqual(res["clock"], "wall")
        rows = {(r["cpus"], r["variant"], r["driver"]): r for r in res["rows"]}
        self.assertEqual(rows[(2, "irq0-qd1", "null_blk")]["params"], "irqmode=0")
        self.assertIsNone(rows[(2, "irq0-qd1", "rnull")]["params"])
        self.assertIsNone(rows[(2, "host-fair-qd1", "rnull")]["ratio"])   # no null_blk anywhere
        # one round: no CI on the wall clock, the ratio of means decides
        v = [x for x in res["verdicts"]["peak"] if x["variant"] == "irq0-qd1"][0]
        self.assertEqual(v["outcome"], "ahead")
        self.assertIn("no CI: fewer than 2 rounds", v["text"])

    def test_without_matplotlib(self):
        self.put("peak/qd1/rnull/r1.json", synthetic_fixture.fio_doc([synthetic_fixture.fio_job(
            "p", read_iops=5)]))
        with mock.patch.dict(sys.modules, {"matplotlib": None}):
            res, err = quiet(report.generate, self.root, self.out, plots=True)
        self.assertEqual(res["plots"], {})
        self.assertTrue(any("matplotlib unavailable" in w for w in res["warnings"]))
        self.assertTrue(os.path.isfile(os.path.join(self.out, "report.md")))
        self.assertFalse(os.path.exists(os.path.join(self.out, "peak.png")))

    def test_group_sum_over_jobs(self):
        J = synthetic_fixture.fio_job
        self.put("starvation/depth64/rnull/r1.json", synthetic_fixture.fio_doc([
            J("a", read_iops=100, ctx=30, read_ios=100),
            J("b", read_iops=50, write_iops=25, ctx=20, read_ios=100, write_ios=50)]))
        res, _ = quiet(report.generate, self.root, self.out, plots=False)
        r = res["rows"][0]
        self.assertAlmostEqual(r["iops_mean"], 175)
        self.assertAlmostEqual(r["ctx_per_io"], 50 / 250)


class CommitTest(unittest.TestCase):
    def test_commit_in_header(self):
        with tempfile.TemporaryDirectory() as d:
            root, out = os.path.join(d, "results"), os.path.join(d, "out")
            synthetic_fixture.generate_policies(root, rounds=1, policies=("fair",))
            path = os.path.join(root, "meta.json")
            meta = json.loads(read(path))
            for commit, line in (("abc1234", "- **Commit:** `abc1234`\n"),
                                 ("abc1234-dirty", "- **Commit:** `abc1234-dirty` (with changes "
                                                   "not committed)\n"),
                                 (None, "- **Commit:** not recorded in meta.json\n")):
                meta["commit"] = commit
                synthetic_fixture.write_json(path, meta)
                quiet(report.generate, root, out, plots=False)
                self.assertIn(line, read(os.path.join(out, "report.md")))


class SyntheticInputTest(synthetic_fixture.ResultsDirCase):
    """A report says loudly when any input is synthetic, and only then."""

    def run_report(self):
        res, _ = quiet(report.generate, self.root, self.out, plots=False)
        summary = json.loads(read(os.path.join(self.out, "summary.json")))
        return res, summary, read(os.path.join(self.out, "report.md"))

    def put_doc(self, rel, doc):
        p = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            json.dump(doc, f)

    def unmarked(self, iops):
        doc = synthetic_fixture.fio_doc([synthetic_fixture.fio_job("p", read_iops=iops)])
        del doc["synthetic"]
        return doc

    def test_fixture_is_marked_and_reported_synthetic(self):
        synthetic_fixture.generate_policies(self.root, rounds=1, policies=("fair",))
        meta = json.loads(read(os.path.join(self.root, "meta.json")))
        self.assertIs(meta["synthetic"], True)
        self.assertIn("synthetic_fixture.py", meta["command"])
        res, summary, md = self.run_report()
        self.assertIs(summary["synthetic"], True)
        self.assertTrue(res["source"]["meta"])
        self.assertEqual(res["source"]["synthetic_files"], res["source"]["files"])
        head = md.split("\n## ", 1)[0]
        self.assertIn("SYNTHETIC INPUT: nothing in this report was measured", head)
        self.assertIn("meta.json is marked synthetic", head)

    def test_one_marked_fio_result_is_enough(self):
        self.put_doc("meta.json", {"clock": "virtual"})
        self.put_doc("peak/qd1/rnull/r1.json", self.unmarked(1000))
        self.put_doc("peak/qd1/null_blk/r1.json",
                     synthetic_fixture.fio_doc([synthetic_fixture.fio_job("p", read_iops=900)]))
        _, summary, md = self.run_report()
        self.assertIs(summary["synthetic"], True)
        self.assertIn("1 of 2 fio results are marked synthetic", md)
        self.assertNotIn("meta.json is marked synthetic", md)

    def test_measured_input_has_no_banner(self):
        self.put_doc("meta.json", {"clock": "virtual"})
        self.put_doc("peak/qd1/rnull/r1.json", self.unmarked(1000))
        self.put_doc("peak/qd1/null_blk/r1.json", self.unmarked(900))
        _, summary, md = self.run_report()
        self.assertIs(summary["synthetic"], False)
        self.assertNotIn("SYNTHETIC", md)
        self.assertIn("neither meta.json nor any of the 2 fio results is marked synthetic", md)


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
