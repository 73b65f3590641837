"""Tests for the first_write, qd_ladder and bind_tags rows: their verdicts
and the bind_tags table (plain unittest)."""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import report  # noqa: E402
import synthetic_fixture  # noqa: E402
from synthetic_fixture import fio_doc, fio_job  # noqa: E402
from test_report import quiet, read  # noqa: E402


class NewRowsTest(synthetic_fixture.ResultsDirCase):
    def put(self, cpus, scen, var, drv, rnd, jobs):
        d = os.path.join(self.root, f"c{cpus}", scen, var, drv)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"r{rnd}.json"), "w") as f:
            json.dump(fio_doc(jobs), f)

    def tree(self, rnull_shared):
        """bind_tags at 4 vCPUs: d0..d3, four jobs each; null_blk's shared
        total 100k, rnull's `rnull_shared`; a host-fair row."""
        for var, drv, per_dev in (("shared", "null_blk", (10e3, 20e3, 30e3, 40e3)),
                                  ("shared", "rnull", tuple(rnull_shared / 4 for _ in range(4))),
                                  ("host-fair", "rnull", (30e3, 30e3, 30e3, 30e3))):
            for rnd in (1, 2):
                self.put(4, "bind_tags", var, drv, rnd,
                         [fio_job(f"d{i}", read_iops=per_dev[i] / 4)
                          for i in range(4) for _ in range(4)])
        with open(os.path.join(self.root, "c4", "bind_tags", "host-fair", "ref"), "w") as f:
            f.write("shared\n")
        # The ladders and first writes at 1 vCPU: rnull behind on one rung.
        for var, rn in (("poll-qd1", 99e3), ("irq-qd1", 101e3)):
            for drv, iops in (("rnull", rn), ("null_blk", 100e3)):
                self.put(1, "qd_ladder", var, drv, 1, [fio_job("qd_ladder", read_iops=iops)])
        for drv, iops in (("rnull", 110e3), ("null_blk", 100e3)):
            self.put(1, "first_write", "qd1", drv, 1, [fio_job("first_write", write_iops=iops)])
        with open(os.path.join(self.root, "meta.json"), "w") as f:
            json.dump({"clock": "virtual", "rounds": 2, "scenarios": {},
                       "boots": [{"cpus": 1, "scenarios": ["first_write", "qd_ladder"]},
                                 {"cpus": 4, "scenarios": ["bind_tags"]}]}, f)

    def test_verdicts_and_table(self):
        self.tree(rnull_shared=110e3)
        res, _ = quiet(report.generate, self.root, self.out, plots=False)
        v = res["verdicts"]
        ladder = {x["variant"]: x["pass"] for x in v["qd_ladder"]}
        self.assertEqual(ladder, {"poll-qd1": False, "irq-qd1": True})
        self.assertEqual([x["pass"] for x in v["first_write"]], [True])
        bind = v["bind_tags"]
        self.assertEqual(len(bind), 1)
        self.assertTrue(bind[0]["pass"])
        self.assertAlmostEqual(bind[0]["value"], 1.1)
        md = read(os.path.join(self.out, "report.md"))
        self.assertIn("| shared | null_blk | 100.0k | 10.0% | 20.0% | 30.0% | 40.0% | – |", md)
        self.assertIn("| host-fair | rnull | 120.0k | 25.0% | 25.0% | 25.0% | 25.0% | 1.2000", md)
        with open(os.path.join(self.out, "summary.json")) as f:
            cells = {(c["variant"], c["driver"]): c for c in json.load(f)["bind_tags"]}
        self.assertAlmostEqual(cells[("shared", "rnull")]["total_iops"], 110e3)
        self.assertAlmostEqual(cells[("shared", "null_blk")]["shares"]["d3"], 0.4)

    def test_behind_on_shared_fails(self):
        self.tree(rnull_shared=90e3)
        res, _ = quiet(report.generate, self.root, self.out, plots=False)
        self.assertFalse(res["verdicts"]["bind_tags"][0]["pass"])


if __name__ == "__main__":
    unittest.main()
