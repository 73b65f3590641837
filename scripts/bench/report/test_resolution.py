"""Tests: a verdict knows the resolution of its figure.

fio's IOPS figure is 1000 * total_ios / runtime with the runtime in whole
milliseconds, so over RUNTIME=1 it moves in steps of about 0.1 %; a
verdict closer to its target than that is undecided, not failed.

    /usr/bin/python3 -m unittest discover -s scripts/bench/report -v
"""

import contextlib
import io
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import parse  # noqa: E402
import report  # noqa: E402
import synthetic_fixture  # noqa: E402
from synthetic_fixture import fio_doc, fio_job, fixture_meta, write_json  # noqa: E402

BASE = 150000.0


class ResolutionTest(synthetic_fixture.ResultsDirCase):
    def put(self, rel, jobs):
        write_json(os.path.join(self.root, rel), fio_doc(jobs))

    def meta(self, scenarios):
        write_json(os.path.join(self.root, "meta.json"), fixture_meta(
            "(test_resolution.py's tree)", clock="virtual", rounds=1,
            boots=[{"cpus": 1, "scenarios": scenarios}]))

    def run_report(self):
        with contextlib.redirect_stderr(io.StringIO()):
            return report.generate(self.root, self.out, plots=False)

    def peak(self, cost, runtime_s):
        """A one-round peak matrix: irq0-qd1 and host-fair-qd1 at `cost`."""
        self.meta(["peak"])
        for drv, io in (("rnull", BASE), ("null_blk", BASE * 0.98)):
            self.put(f"c1/peak/irq0-qd1/{drv}/r1.json",
                     [fio_job("peak", read_iops=io, runtime_s=runtime_s)])
        self.put("c1/peak/host-fair-qd1/rnull/r1.json",
                 [fio_job("peak", read_iops=BASE * cost, runtime_s=runtime_s)])
        with open(os.path.join(self.root, "c1/peak/host-fair-qd1/ref"), "w") as f:
            f.write("irq0-qd1\n")
        res = self.run_report()
        return res, [v for v in res["verdicts"]["peak"] if v["check"] == "host_cost"][0]

    def test_step_of_a_figure(self):
        # 1000 * ios / runtime: one ms moves it by iops / runtime, one I/O by
        # 1000 / runtime.
        job = fio_job("p", read_iops=BASE, runtime_s=1)
        self.assertAlmostEqual(parse.iops_step(job), (BASE + 1000) / 1000)
        both = fio_job("p", read_iops=1000, write_iops=3000, runtime_s=2)
        self.assertAlmostEqual(parse.iops_step(both), 2000 / 2000 + 4000 / 2000)
        del job["read"]["runtime"]
        self.assertIsNone(parse.iops_step(job))

    def test_row_step_sums_over_jobs(self):
        self.meta(["starvation"])
        self.put("c1/starvation/depth64/rnull/r1.json",
                 [fio_job("a", read_iops=1000, runtime_s=1),
                  fio_job("b", read_iops=3000, runtime_s=1)])
        row = self.run_report()["rows"][0]
        self.assertAlmostEqual(row["iops_step"], 2000 / 1000 + 4000 / 1000)

    def test_short_run_near_its_target_is_undecided(self):
        res, v = self.peak(0.9895, runtime_s=1)
        # two figures, each about 0.1 % coarse: the ratio's resolution
        rel = (BASE + 1000) / 1000 / BASE + (BASE * 0.9895 + 1000) / 1000 / (BASE * 0.9895)
        self.assertAlmostEqual(v["resolution"], 0.9895 * rel)
        self.assertIsNone(v["pass"])
        self.assertTrue(v["undecided"])
        self.assertIn("undecided: run too short (resolution 0.0020)", v["text"])
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            self.assertIn("**Verdict summary:** 1/2 checks pass, 1 undecided", f.read())
        with open(os.path.join(self.out, "summary.json"), encoding="utf-8") as f:
            summary = json.load(f)
        row = [r for r in summary["rows"] if r["variant"] == "host-fair-qd1"][0]
        self.assertIsNotNone(row["ratio_res"])

    def test_short_run_just_above_its_target_is_undecided_too(self):
        _, v = self.peak(0.9905, runtime_s=1)
        self.assertIsNone(v["pass"])

    def test_long_run_decides(self):
        _, v = self.peak(0.9895, runtime_s=10)
        self.assertIs(v["pass"], False)
        self.assertIn("costs > 1%", v["text"])
        _, v = self.peak(0.9905, runtime_s=10)
        self.assertIs(v["pass"], True)

    def test_clear_miss_fails_however_short(self):
        _, v = self.peak(0.985, runtime_s=1)
        self.assertIs(v["pass"], False)

    def test_unknown_resolution_decides_as_before(self):
        self.meta(["peak"])
        for rel, io in (("irq0-qd1/rnull", BASE), ("irq0-qd1/null_blk", BASE),
                        ("host-fair-qd1/rnull", BASE * 0.9899)):
            job = fio_job("peak", read_iops=io, runtime_s=1)
            del job["read"]["runtime"]
            self.put(f"c1/peak/{rel}/r1.json", [job])
        with open(os.path.join(self.root, "c1/peak/host-fair-qd1/ref"), "w") as f:
            f.write("irq0-qd1\n")
        res = self.run_report()
        v = [v for v in res["verdicts"]["peak"] if v["check"] == "host_cost"][0]
        self.assertIs(v["pass"], False)

    def test_row_verdicts_and_fast_slow(self):
        self.meta(["slice_single", "block035", "hotpath"])
        for var, io in (("seqread-ts0", 1000.0), ("seqread-ts250", 969.5)):
            self.put(f"c1/slice_single/{var}/rnull/r1.json",
                     [fio_job("ss", read_iops=io, runtime_s=1)])
        self.put("c1/block035/fair/rnull/r1.json",
                 [fio_job("fast", read_iops=BASE, runtime_s=1),
                  fio_job("slow", read_iops=BASE * 1.0005, runtime_s=1)])
        for var, io in (("tags-off", BASE), ("fair", BASE * 0.9988)):
            self.put(f"c1/hotpath/{var}/rnull/r1.json",
                     [fio_job("hot", read_iops=io, runtime_s=1)])
        verd = self.run_report()["verdicts"]
        single = verd["slice_single"][0]     # 0.9695 against 0.97, steps of 2 %
        self.assertIsNone(single["pass"])
        fast = verd["block035"][0]           # fast 0.05 % below slow
        self.assertIsNone(fast["pass"])
        self.assertIn("fast 150.0k < slow 150.1k → **undecided", fast["text"])
        hot = verd["hotpath"][0]             # -0.12 % against 0.1 %
        self.assertEqual(hot["outcome"], "undecided")


if __name__ == "__main__":
    unittest.main()
