#!/usr/bin/env python3
"""Tests of bench/eval/repredict.py's diagnostics (no GPU, no memplace run): the device's spec,
the one-array pairs the model orders right, and the what-if that corrects single moves."""
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "bench", "eval"))
import repredict as R  # noqa: E402


class DefaultSpec(unittest.TestCase):
    def spec_for(self, text):
        with tempfile.TemporaryDirectory() as d:
            if text is not None:
                with open(os.path.join(d, "device.txt"), "w") as f:
                    f.write(text)
            return R.default_spec(d)

    def test_the_device_names_the_spec(self):
        header = "name, driver_version, memory.total [MiB]\n"
        self.assertEqual(self.spec_for(header + "NVIDIA H200, 580.159.04, 143771 MiB\n"), "h200")
        self.assertEqual(self.spec_for(header + "NVIDIA H100 80GB HBM3, 580.159.04\n"), "h100")
        self.assertEqual(self.spec_for(None), "h100")


class OneMove(unittest.TestCase):
    def test_one_array_apart_or_none(self):
        a = R.parse("A=global,B=readonly")
        self.assertEqual(R.one_move(a, R.parse("A=texture,B=readonly")), ("A", "global", "texture"))
        self.assertIsNone(R.one_move(a, R.parse("A=texture,B=global")))
        self.assertIsNone(R.one_move(a, a))


class PairCounts(unittest.TestCase):
    def test_right_wrong_aliases_and_threshold(self):
        measured = {"A=global,B=global": (1.00, True), "A=texture,B=global": (1.20, True),
                    "A=global,B=l2persist": (0.90, True), "A=readonly,B=global": (1.50, True),
                    "A=global,B=texture": (1.01, True)}
        pred = {"A=global,B=global": 1.0, "A=texture,B=global": 1.3,  # right: both slower
                "A=global,B=l2persist": 1.1,  # wrong: measured faster
                "A=readonly,B=global": 1.0,  # global - readonly: left out
                "A=global,B=texture": 0.5}  # 1% apart: below the threshold
        tally, wrong = {}, []
        R.pair_counts(measured, pred, 0.05, tally, wrong, "case")
        # Also one move apart: A readonly -> texture (1.20 / 1.50 measured, 1.3 / 1.0 predicted)
        # and B l2persist -> texture (1.01 / 0.90, 0.5 / 1.1): both ordered wrong.
        self.assertEqual(tally, {("global", "texture"): [1, 0], ("global", "l2persist"): [0, 1],
                                 ("readonly", "texture"): [0, 1],
                                 ("l2persist", "texture"): [0, 1]})
        self.assertEqual(len(wrong), 3)
        self.assertTrue(any("B: global -> l2persist" in w for w in wrong))


class WhatIf(unittest.TestCase):
    def test_single_moves_corrected_and_combined(self):
        orig = "A=global,B=global"
        measured = {orig: (1.0, True), "A=texture,B=global": (1.2, True),
                    "A=global,B=texture": (0.9, True), "A=texture,B=texture": (1.1, True),
                    "A=l2persist,B=global": (1.5, True)}
        pred = {orig: 1.0, "A=texture,B=global": 1.1, "A=global,B=texture": 1.1,
                "A=texture,B=texture": 1.2, "A=l2persist,B=global": 1.0}
        out = R.what_if(measured, pred, orig, {"texture"})
        self.assertAlmostEqual(out[orig], 1.0)
        self.assertAlmostEqual(out["A=texture,B=global"], 1.2)
        self.assertAlmostEqual(out["A=global,B=texture"], 0.9)
        self.assertAlmostEqual(out["A=texture,B=texture"], 1.2 * (1.2 / 1.1) * (0.9 / 1.1))
        self.assertAlmostEqual(out["A=l2persist,B=global"], 1.0)  # not a corrected place


if __name__ == "__main__":
    unittest.main()
