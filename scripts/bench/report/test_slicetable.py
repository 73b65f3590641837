"""Tests for slicetable.py: the slice table beside the schedulers, the mix,
the drive's counters and the issue's targets, on a small synthetic tree
whose every figure is known.

    /usr/bin/python3 -m unittest discover -s scripts/bench/report -v
"""

import contextlib
import io
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import report  # noqa: E402
import slicetable  # noqa: E402
from synthetic_fixture import fio_doc, fio_job, fixture_meta, write_json  # noqa: E402

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False

# (workload, driver, time_slice_us, jobs) -> IOPS of each of two rounds.
SEQREAD = {
    ("rnull", 0): {1: 20000, 8: 6000},        # 0.30 of one job: pass
    ("rnull", 250): {1: 19900, 8: 9000},      # 1.5x: pass; one job -0.5%: pass
    ("rnull", 20000): {1: 19700, 8: 12000},   # best 0.60: fail; one job -1.5%: fail
    ("rnull", 100000): {1: 19700, 8: 19500},  # beyond the list: beats BFQ
    ("bfq", 0): {1: 20000, 8: 7000},
    ("bfq-lowlat0", 0): {1: 20000, 8: 19000},  # BFQ's best: beats the slices
    ("mq-deadline", 0): {1: 20000, 8: 6100},
}
RANDREAD = {("rnull", 0): 100, ("rnull", 250): 99, ("rnull", 20000): 90}   # -10%: fail
MIX = {("rnull", 0): (10, 300e6), ("rnull", 250): (40, 70e6), ("bfq", 0): (5, 900e6)}


def write_tree(root, spread=0.0):
    """A c8 boot with slices and slice_mix, two rounds apart by `spread`."""
    def put(scen, var, drv, jobs, stats=None):
        for r, f in ((1, 1.0), (2, 1.0 + spread)):
            d = os.path.join(root, "c8", scen, var, drv)
            write_json(os.path.join(d, f"r{r}.json"), fio_doc(jobs(f)))
            if stats:
                with open(os.path.join(d, f"r{r}.stats"), "w") as fh:
                    fh.write(stats)

    for (drv, ts), by_jobs in SEQREAD.items():
        for nj, io in by_jobs.items():
            stats = None
            if nj == 8:
                misses = 10 if drv == "bfq-lowlat0" else 100
                stats = (f"hits {io * 3 - misses}\nreadahead_hits 0\nmisses {misses}\n"
                         "writes 0\nscheduler [none]\n")
                if drv.startswith("bfq"):
                    stats += f"iosched.slice_idle 8\niosched.low_latency {int(drv == 'bfq')}\n"
            put("slices", f"seqread-ts{ts}-j{nj}", drv,
                lambda f, io=io: [fio_job("slices", read_iops=io * f)], stats)
    for (drv, ts), io in RANDREAD.items():
        for nj in (1, 8):
            put("slices", f"randread-ts{ts}-j{nj}", drv,
                lambda f, io=io: [fio_job("slices", read_iops=io * f)])
    for (drv, ts), (rand, p99) in MIX.items():
        put("slice_mix", f"mix-ts{ts}", drv, lambda f, rand=rand, p99=p99: [
            fio_job("seq", read_iops=1000 * f) for _ in range(7)]
            + [fio_job("rand", read_iops=rand * f, p50=p99 / 4, p99=p99)])
    write_json(os.path.join(root, "meta.json"), fixture_meta(
        "(test_slicetable.py's tree)", clock="virtual", rounds=2,
        boots=[{"cpus": 8, "scenarios": ["slices"]}],
        scenarios={"slices": {"title": "slices"}, "slice_mix": {"title": "mix"}}))


class SliceTableTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.results = os.path.join(cls.tmp.name, "raw")
        cls.out = os.path.join(cls.tmp.name, "out")
        write_tree(cls.results)
        with contextlib.redirect_stderr(io.StringIO()):
            cls.res = report.generate(cls.results, cls.out, plots=HAVE_MPL)
        with open(os.path.join(cls.out, "report.md"), encoding="utf-8") as f:
            cls.md = f.read()
        cls.targets = {t["text"].split(":")[0].split(" (")[0]: t
                       for t in slicetable.targets(cls.res["rows"])}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_settings_order_none_schedulers_slices(self):
        cap, head, body = slicetable.side_by_side(self.res["rows"])[0]
        self.assertIn("seqread", cap)
        self.assertEqual(head, ["setting", "1 job", "8 jobs"])
        self.assertEqual([b[0] for b in body], [
            "none, time_slice_us=0", "mq-deadline", "bfq", "bfq-lowlat0",
            "time_slice_us=250", "time_slice_us=20000", "time_slice_us=100000",
            "Herrmann (HD155UI): 0 / 250 us / CFQ"])
        # Shares of one job with no scheduler, computed from the rounds' mean.
        self.assertEqual(body[0][2], "6,000 (0.30)")
        self.assertEqual(body[3][2], "19,000 (0.95)")

    def test_targets(self):
        t = {k: v["pass"] for k, v in self.targets.items()}
        self.assertTrue(t["8 jobs at time_slice_us=0 keep 0.30 of one job"])
        self.assertTrue(t["8 jobs at 250 us against 0"])
        self.assertFalse(t["the best slice at 8 jobs"])
        self.assertIn("20000 us, 12,000", self.targets["the best slice at 8 jobs"]["text"])
        bfq = [v for k, v in self.targets.items() if "BFQ's best" in v["text"]][0]
        self.assertFalse(bfq["pass"])
        self.assertIn("bfq-lowlat0, 19,000", bfq["text"])
        beyond = [v for v in slicetable.targets(self.res["rows"])
                  if v["text"].startswith("beyond")]
        self.assertEqual(len(beyond), 2)
        self.assertTrue(all(v["pass"] for v in beyond))
        self.assertIn("(100000 us, 19,500)", beyond[0]["text"])
        self.assertFalse(t["random read, 1 job(s)"])
        self.assertIn("loses 10.0%", self.targets["random read, 1 job(s)"]["text"])
        self.assertFalse(t["one seqread job"])
        self.assertIn("(20000 us) loses 1.50%", self.targets["one seqread job"]["text"])
        self.assertTrue(t["rounds agree within 0.00% in every cell"])

    def test_rounds_apart_fail_the_agreement(self):
        with tempfile.TemporaryDirectory() as tmp:
            write_tree(os.path.join(tmp, "raw"), spread=0.02)
            with contextlib.redirect_stderr(io.StringIO()):
                res = report.generate(os.path.join(tmp, "raw"), os.path.join(tmp, "o"),
                                      plots=False)
        agree = [t for t in slicetable.targets(res["rows"]) if "rounds agree" in t["text"]]
        self.assertEqual(len(agree), 1)
        self.assertFalse(agree[0]["pass"])
        self.assertIn("2.00%", agree[0]["text"])

    def test_mix_table(self):
        cap, head, body = slicetable.mix_table(self.res["rows"])
        self.assertEqual(head[:3], ["setting", "random IOPS", "random p99 ms"])
        rows = {b[0]: b for b in body}
        self.assertEqual(rows["time_slice_us=250"][1:3], ["40.0", "70.0"])
        self.assertEqual(rows["bfq"][2], "900.0")
        # The seven sequential jobs, summed.
        self.assertEqual(rows["none, time_slice_us=0"][4], "7,000")

    def test_counters_from_stats_files(self):
        boots = [b for b in report.collect(self.results).boots]
        cap, head, body = slicetable.counters_table(self.res["rows"], boots)
        rows = {b[0]: b for b in body}
        self.assertEqual(rows["bfq-lowlat0"][1], "57,000")     # hits + misses
        self.assertEqual(rows["bfq-lowlat0"][3], "5700")        # reads per miss
        self.assertIn("low_latency=0", rows["bfq-lowlat0"][4])
        self.assertEqual(rows["none, time_slice_us=0"][4], "–")

    def test_report_md_has_the_tables_and_targets(self):
        for s in ("**seqread**: fio IOPS", "**mix**: one random reader",
                  "**the drive with 8 sequential readers**",
                  "**Herrmann's targets (issue 16), on the driver:**", "- ✗ the best slice"):
            self.assertIn(s, self.md)

    def test_window_iops_from_two_readings(self):
        one = {"w0.hits": 100.0, "w0.readahead_hits": 0.0, "w0.misses": 10.0, "w0.writes": 0.0,
               "w0.now_ns": 1e9, "w1.hits": 2090.0, "w1.readahead_hits": 10.0,
               "w1.misses": 10.0, "w1.writes": 0.0, "w1.now_ns": 1.5e9}
        self.assertAlmostEqual(slicetable.window_iops(one), 4000.0)
        self.assertIsNone(slicetable.window_iops({"hits": 5.0}))

    def test_the_drives_window_replaces_fio(self):
        st = {("slices", "seqread-ts0-j8", "rnull"): {"window_iops": 5000.0}}
        cap, _, body = slicetable.side_by_side(self.res["rows"], st)[0]
        self.assertIn("the drive's IOPS over a window", cap)
        self.assertEqual(body[0][2], "5,000 (0.25)")
        t = [x for x in slicetable.targets(self.res["rows"], st) if "time_slice_us=0 keep" in x["text"]]
        self.assertIn("keep 0.25 of one job", t[0]["text"])

    @unittest.skipUnless(HAVE_MPL, "matplotlib not available")
    def test_plot_written(self):
        self.assertIn("slice_table.png", self.res["plots"]["slices"])
        self.assertTrue(os.path.getsize(os.path.join(self.out, "slice_table.png")) > 1000)


if __name__ == "__main__":
    unittest.main()
