#!/usr/bin/env python3
"""Tests of bench/public/runs.py without a GPU: the output comparison (timing lines dropped,
output files, the first difference), programs.json's timing-line patterns against the lines the
programs print, the report's decisions, warnings and first-run overheads, the input generators,
the run order and its budget, the statistics, and a whole `run` of made-up programs (shell
scripts standing in for the original and the memplace build)."""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
RUNS = ROOT / "bench" / "public" / "runs.py"
sys.path.insert(0, str(RUNS.parent))
import runs as R  # noqa: E402


def write_run(folder, stdout, files=None):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stdout.txt").write_text(stdout)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    return folder


class Comparison(unittest.TestCase):
    def test_timing_lines_are_dropped_and_nothing_else(self):
        text = "WG 16\nTime consumed(ms): 1.5\nresult 3\nExec: 2.0\n"
        self.assertEqual(R.drop_timing_lines(text, ["^Time consumed", "^Exec:"]),
                         "WG 16\nresult 3\n")
        self.assertEqual(R.drop_timing_lines(text, []), text)

    def test_only_timing_lines_differ_is_bitwise(self):
        with tempfile.TemporaryDirectory() as d:
            a = write_run(Path(d) / "a", "x 1\nTime: 1.0\n", {"result.txt": "1 2 3\n"})
            b = write_run(Path(d) / "b", "x 1\nTime: 9.9\n", {"result.txt": "1 2 3\n"})
            seen_a = R.observed_outputs(a, ["result.txt"], ["^Time:"])
            seen_b = R.observed_outputs(b, ["result.txt"], ["^Time:"])
            self.assertEqual(R.differing(seen_a, seen_b), [])
            self.assertEqual(R.differing(R.observed_outputs(a, [], []),
                                         R.observed_outputs(b, [], [])), ["stdout"])

    def test_a_changed_or_missing_output_file_differs(self):
        with tempfile.TemporaryDirectory() as d:
            a = write_run(Path(d) / "a", "x\n", {"result.txt": "1 2 3\n", "o.txt": "k\n"})
            b = write_run(Path(d) / "b", "x\n", {"result.txt": "1 2 4\n"})
            seen_a = R.observed_outputs(a, ["result.txt", "o.txt"], [])
            seen_b = R.observed_outputs(b, ["result.txt", "o.txt"], [])
            self.assertEqual(seen_b["o.txt"], "missing")
            self.assertEqual(R.differing(seen_a, seen_b), ["o.txt", "result.txt"])
            first = R.first_difference(a, b, ["result.txt"], [], "cold")
            self.assertEqual(first, {"run": "cold", "output": "result.txt", "line": 1,
                                     "original": "1 2 3", "memplace": "1 2 4"})
            self.assertEqual(R.first_difference(a, b, ["o.txt"], [], "warm1")["why"], "missing")

    def test_first_difference_in_stdout_skips_timing_lines(self):
        with tempfile.TemporaryDirectory() as d:
            a = write_run(Path(d) / "a", "t 1\nv 1\nv 2\n")
            b = write_run(Path(d) / "b", "t 2\nv 1\n")
            first = R.first_difference(a, b, ["stdout"], ["^t "], "cold")
            self.assertEqual((first["line"], first["original"], first["memplace"]), (2, "v 2", None))


# Per program of programs.json's "runs": lines as its printf calls to stdout write them (the
# Rodinia sources, TIMING off): (lines that hold times, lines that must stay).
PRINTED = {
    "gaussian": (["Time total (including memory transfers)\t0.123456 sec",
                  "Time for CUDA kernels:\t0.000321 sec"],
                 ["WG size of kernel 1 = 512, WG size of kernel 2= 4 X 4",
                  "Create matrix internally in parse, size = 256 ", "    0.10    -0.25 ",
                  "The final solution is: ", "1.00 1.00 "]),
    "lud": (["Time consumed(ms): 12.345000"],
            ["WG size of kernel = 16 X 16", "Generate input matrix internally, size =512",
             "Before LUD", ">>>Verify<<<<", "dismatch at (3, 4): (o)0.500000 (n)0.500001"]),
    "nw": ([], ["WG size of kernel = 16 ", "Start Needleman-Wunsch",
                "Processing top-left matrix", "Processing bottom-right matrix"]),
    "pathfinder": ([], ["pyramidHeight: 20", "gridSize: [10000]", "blockSize: 256",
                        "3 1 4 1 5 ", "12 7 9 "]),
    "backprop": ([], ["Random number generator seed: 7", "Input layer size : 65536",
                      "Starting training kernel", "Performing GPU computation", "Training done"]),
    "srad_v2": ([], ["WG size of kernel = 16 X 16", "Randomizing the input matrix",
                     "Start the SRAD main loop", "Printing Output:", "0.12345 0.54321 ",
                     "Computation Done"]),
    "lavaMD": ([" 0.000123456789 s,  1.234567890123 % : GPU: SET DEVICE / DRIVER INIT",
                "12.000123456789 s, 98.765432101234 % : GPU: KERNEL", "0.012345678901 s"],
               ["thread block size of kernel = 128 ", "Configuration used: boxes1d = 5",
                "Time spent in different stages of GPU_CUDA KERNEL:", "Total time:"]),
    "streamcluster": (["time = 1.234567s", "time pgain = 0.000000s", "time pgain_dist = 0.1s",
                       "time pselect = 0.000142s", "time localSearch = 0.5s",
                       "time serial = 0.000012s", "time CPU to GPU memory copy = 0.001s",
                       "time GPU to CPU memory copy back = 0.002s", "time GPU malloc = 0.003s",
                       "time GPU free = 0.0s", "time kernel = 0.25s"],
                      ["PARSEC Benchmark Suite", "====CUDA Timing info (pgain)====",
                       "thread 0: Finished first call to speedy, cost=1234.500000, k=12",
                       "loz = 0.000000, hiz = 2.5", "Running Local Search...",
                       "finish cont center", ""]),
    "hotspot": ([], ["WG size of kernel = 16 X 16", "pyramidHeight: 2", "gridSize: [512, 512]",
                     "Start computing the transient temperature", "Ending simulation"]),
    "bfs": ([], ["Reading File", "Read File", "Copied Everything to GPU memory",
                 "Kernel Executed 12 times", "Result stored in result.txt"]),
    "nn": ([], ["1980  6 27  0  7 GORDON     68.0   5.4   87  816 --> Distance=12.345678"]),
    "b+tree": (["Tree transformation took 0.200302",
                " 0.000123456789 s,  1.234567890123 % : GPU: SET DEVICE / DRIVER INIT",
                "0.000002000000 s, 0.5 % : GPU MEM: FRE", "0.012345678901 s"],
               ["WG size of kernel 1 & 2  = 256 ", "Selecting device 0",
                "Input File: /tmp/i/input.txt ", "Command Buffer: ", "j 6000 6000", "k 10000",
                "Transforming data to a GPU suitable structure...", "> ",
                "******command: j count=6000, rSize=6000 ",
                "knodes_elem=3078, knodes_unit_mem=2068, knodes_mem=6365304",
                "# of blocks = 6000, # of threads/block = 256 (ensure that device can handle)",
                "Time spent in different stages of GPU_CUDA KERNEL:", "Total time:",
                "> > > > > > > > > > > > ", " ******command: k count=10000 ",
                "records_elem=524288, records_unit_mem=4, records_mem=2097152"]),
    "dwt2d": ([], ["Using device 0: NVIDIA H100 80GB HBM3", "Source file:\t\t/tmp/i/image.bmp",
                   " Dimensions:\t\t1024x1024", " 9/7 transform:\t\t0",
                   "Loading ipnput: /tmp/i/image.bmp", "precteno 3145728, inputsize 3145728",
                   "*** 3 stages of 2D forward DWT:", " sliding steps = 9 , gx = 6 , gy = 1 ",
                   "fdwt53Kernel in launchFDWT53Kernel has finished",
                   "Writing to out.r (1024 x 1024)"]),
}


class TimingPatterns(unittest.TestCase):
    def test_every_program_has_printed_lines_here(self):
        runs = json.loads((RUNS.parent / "programs.json").read_text())["rodinia"]["runs"]
        self.assertEqual(sorted(runs), sorted(PRINTED))

    def test_patterns_drop_the_times_and_keep_the_rest(self):
        runs = json.loads((RUNS.parent / "programs.json").read_text())["rodinia"]["runs"]
        for program, (timing, kept) in PRINTED.items():
            with self.subTest(program=program):
                # Interleaved, as the programs print them: the kept lines stay in order.
                mixed = [line for i, k in enumerate(kept)
                         for line in ([timing[i]] if i < len(timing) else []) + [k]]
                text = "".join(f"{line}\n" for line in mixed + timing[len(kept):])
                self.assertEqual(R.drop_timing_lines(text, runs[program]["drop"]),
                                 "".join(f"{line}\n" for line in kept))


REPORT = {"kernels": [
    {"kernel": "k", "status": "placed", "applied": {"a": "shared", "b": "global"}},
    {"kernel": "k", "status": "untraced", "applied": {"a": "global"}},
    {"kernel": "r", "status": "original", "why": "the traced run's outputs differed: a race",
     "applied": {}}],
    "warnings": ["memplace placer: r: outputs differed"]}


class Report(unittest.TestCase):
    def test_decisions_per_kernel_name_statuses_and_places(self):
        self.assertEqual(R.kernel_decisions(REPORT),
                         {"k": "placed/untraced a:shared", "r": "original"})
        self.assertEqual(R.kernel_decisions(None), {})

    def test_messages_from_stderr_and_report_once_each(self):
        stderr = "result 1\nmemplace placer: r: outputs differed\nother\n"
        self.assertEqual(R.memplace_messages(stderr, REPORT), [
            "r: outputs differed",
            "r: original: the traced run's outputs differed: a race"])


    def test_overheads_per_kernel_signature(self):
        report = {"kernels": [
            {"kernel": "k", "status": "placed", "why": "", "signature": {"text": "k grid 4"},
             "launches": {"traced": 1, "total": 10},
             "overhead_ms": {"total": 3.5, "profiling": 2.0, "engine": 1.0, "transform": 0.5,
                             "tuning": 0.0, "detail": {"host_us_median_original": 12.5}}},
            {"kernel": "u", "status": "untraced", "why": "launched once"}]}
        k, u = R.kernel_overheads(report)
        self.assertEqual(k, {"kernel": "k", "signature": "k grid 4", "status": "placed",
                             "why": "", "launches_traced": 1, "launches_total": 10,
                             "overhead_ms": {"total": 3.5, "profiling": 2.0, "engine": 1.0,
                                             "transform": 0.5, "tuning": 0.0},
                             "host_us_median_original": 12.5})
        self.assertEqual((u["status"], u["why"], u["overhead_ms"]["total"],
                          u["host_us_median_original"]), ("untraced", "launched once", None, None))
        self.assertEqual(R.kernel_overheads(None), [])


class Inputs(unittest.TestCase):
    def test_hotspot_files_have_one_value_a_cell(self):
        with tempfile.TemporaryDirectory() as d:
            R.generate_hotspot(Path(d), 8)
            temp = (Path(d) / "temp").read_text().split()
            power = (Path(d) / "power").read_text().split()
            self.assertEqual((len(temp), len(power)), (64, 64))
            self.assertTrue(all(320 <= float(v) <= 340 for v in temp))
            before = (Path(d) / "temp").read_bytes()
            R.generate_hotspot(Path(d), 8)
            self.assertEqual((Path(d) / "temp").read_bytes(), before)  # the same every time

    def test_bfs_graph_is_consistent(self):
        with tempfile.TemporaryDirectory() as d:
            R.generate_bfs(Path(d), 100, 4)
            words = [int(w) for w in (Path(d) / "graph.txt").read_text().split()]
            nodes = words[0]
            pairs = [(words[1 + 2 * i], words[2 + 2 * i]) for i in range(nodes)]
            rest = words[1 + 2 * nodes:]
            edges = rest[1]
            self.assertEqual(nodes, 100)
            self.assertEqual(rest[0], 0)  # the source
            start = 0
            for first, count in pairs:
                self.assertEqual(first, start)
                start += count
            self.assertEqual(edges, start)
            self.assertEqual(len(rest[2:]), 2 * edges)
            self.assertTrue(all(0 <= v < nodes for v in rest[2::2]))

    def test_nn_records_are_hurricane_gen_lines_at_nns_columns(self):
        with tempfile.TemporaryDirectory() as d:
            R.generate_nn(Path(d), 103, 4)
            names = (Path(d) / "list.txt").read_text().splitlines()
            self.assertEqual(len(names), 4)
            lines = []
            for name in names:
                self.assertTrue(Path(name).is_absolute() and Path(name).is_file(), name)
                self.assertLessEqual(len(name), R.NN_DBNAME_MAX)
                lines += Path(name).read_text().splitlines(keepends=True)
            self.assertEqual(len(lines), 103)
            for line in lines:
                # nn: fgets of 48 characters, then the newline; latitude and longitude are
                # the 5 characters at 28 and at 33 (atof)
                self.assertEqual((len(line), line[-1]), (49, "\n"), line)
                self.assertTrue(7 <= float(line[28:33]) < 70, line)
                self.assertTrue(0 <= float(line[33:38]) < 358, line)
                self.assertIn(line[17:26].strip(), R.HURRICANE_NAMES)
            before = Path(names[0]).read_bytes()
            R.generate_nn(Path(d), 103, 4)
            self.assertEqual(Path(names[0]).read_bytes(), before)  # the same every time
            deep = Path(d) / ("x" * 64)
            with self.assertRaisesRegex(ValueError, "char\\[64\\]"):
                R.generate_nn(deep, 10, 1)

    def test_btree_keys_and_commands(self):
        with tempfile.TemporaryDirectory() as d:
            R.generate_btree(Path(d), 1000, 100, 300)
            words = [int(w) for w in (Path(d) / "input.txt").read_text().split()]
            self.assertEqual(words[0], 1000)
            self.assertEqual(sorted(words[1:]), list(range(1, 2000, 2)))
            self.assertNotEqual(words[1:], sorted(words[1:]))
            command = (Path(d) / "command.txt").read_bytes()
            # count twice (b+tree reads j's count as its range size too), and the NUL that ends
            # the buffer b+tree walks as a string; no other letter: each is a command
            self.assertEqual(command, b"j 100 100\nk 300\n\0")
            with self.assertRaisesRegex(ValueError, "65535"):
                R.generate_btree(Path(d), 100000, 10, 65536)
            with self.assertRaisesRegex(ValueError, "range size"):
                R.generate_btree(Path(d), 100, 101, 10)

    def test_dwt2d_image_is_a_bmp_at_least_the_samples_long(self):
        with tempfile.TemporaryDirectory() as d:
            R.generate_dwt2d(Path(d), 30, 8)
            data = (Path(d) / "image.bmp").read_bytes()
            word = lambda at, n=4: int.from_bytes(data[at:at + n], "little")
            self.assertEqual(data[:2], b"BM")
            self.assertEqual((word(2), word(10), word(14)), (len(data), 54, 40))
            self.assertEqual((word(18), word(22), word(26, 2), word(28, 2)), (30, 8, 1, 24))
            self.assertEqual(len(data), 54 + 8 * 92)  # rows of 90 bytes padded to 92
            self.assertGreaterEqual(len(data), 30 * 8 * 3)  # dwt2d reads w*h*3 bytes
            self.assertGreater(len(set(data[54:])), 50)  # a picture, not a constant
            R.generate_dwt2d(Path(d), 30, 8)
            self.assertEqual((Path(d) / "image.bmp").read_bytes(), data)

    def test_every_generated_input_of_programs_json_generates(self):
        # programs.json's generate entries, their sizes cut to 64: the names match the
        # generators' parameters.
        runs = json.loads((RUNS.parent / "programs.json").read_text())["rodinia"]["runs"]
        for program, spec in runs.items():
            for inp in spec["inputs"]:
                if "generate" not in inp:
                    continue
                with self.subTest(program=program, input=inp["name"]), \
                        tempfile.TemporaryDirectory() as d:
                    small = {k: min(v, 64) if isinstance(v, int) else v
                             for k, v in inp["generate"].items()}
                    R.GENERATORS[small["kind"]](Path(d), small)
                    self.assertTrue(any(Path(d).iterdir()))
                    inputs = [a.replace("{inputs}/", "") for a in inp["argv"]
                              if a.startswith("{inputs}/")]
                    self.assertTrue(all((Path(d) / a).is_file() for a in inputs), inputs)


class Plan(unittest.TestCase):
    def test_first_inputs_of_all_programs_come_first(self):
        manifest = {"programs": [{"program": "a", "inputs": [{"name": "a1"}, {"name": "a2"}]},
                                 {"program": "b", "inputs": [{"name": "b1"}]}]}
        order = [(p["program"], i["name"]) for p, i in R.plan_order(manifest)]
        self.assertEqual(order, [("a", "a1"), ("b", "b1"), ("a", "a2")])
        self.assertEqual([i["name"] for _, i in R.plan_order(manifest, ["b"])], ["b1"])

    def test_manifest_problems_are_named(self):
        manifest = {"programs": [{"program": "a", "original": "bin/a.original.gz",
                                  "memplace": None, "failures": [], "drop": ["("],
                                  "fixed_time": True,
                                  "inputs": [{"name": "x", "argv": [],
                                              "generate": {"kind": "nope"}}]}]}
        with tempfile.TemporaryDirectory() as d:
            problems = R.check_manifest(Path(d), manifest, None)
        self.assertEqual(len(problems), 4, problems)
        self.assertIn("bin/a.original.gz missing", problems[0])

    def test_a_later_input_needs_its_runs_at_the_earlier_inputs_median(self):
        rows = [{"program": "a", "original_s": 2.0}, {"program": "b", "original_s": 0.5}]
        self.assertEqual(R.input_needs_s(rows, "a", 18), 36.0)
        self.assertEqual(R.input_needs_s(rows, "b", 18), 10.0)  # 9 s: the floor
        self.assertEqual(R.input_needs_s(rows, "c", 18), 10.0)  # a first input


class Summary(unittest.TestCase):
    def run_row(self, variant, label, wall, seen):
        return {"variant": variant, "label": label, "wall_s": wall, "rc": 0, "seen": seen,
                "decisions": {"k": "placed a:shared"}, "messages": []}

    def test_medians_ranges_ratios_and_bitwise(self):
        same, other = {"stdout": "1"}, {"stdout": "2"}
        row = {"runs": [self.run_row("original", "original", w, same) for w in (1.0, 2.0, 1.2)]
               + [self.run_row("memplace", "cold", 1.5, same),
                  self.run_row("memplace", "warm1", 1.1, same),
                  self.run_row("memplace", "warm2", 1.3, other)]}
        R.summarize(row)
        self.assertEqual((row["original_s"], row["cold_s"], row["warm_s"]), (1.2, 1.5, 1.2))
        self.assertEqual((row["original_min_s"], row["original_max_s"]), (1.0, 2.0))
        self.assertEqual((row["warm_min_s"], row["warm_max_s"]), (1.1, 1.3))
        self.assertEqual((row["cold_ratio"], row["warm_ratio"]), (1.25, 1.0))
        self.assertFalse(row["bitwise"])
        self.assertEqual(row["differs"], ["warm2:stdout"])
        self.assertTrue(row["original_deterministic"])
        self.assertNotIn("original_failed", row)
        row.update(program="p", input="i")
        table = R.markdown_table([row])
        self.assertIn("| p | i | 1.200 (1.000-2.000) | 0.7 | 1.500 (1.500-1.500) | 1.25 "
                      "| 1.200 (1.100-1.300) | 1.0 | no: warm2:stdout |", table)

    def test_cold_runs_give_a_median_and_the_first_ones_overheads(self):
        same = {"stdout": "1"}
        row = {"runs": [self.run_row("original", "original", 1.0, same)]
               + [self.run_row("memplace", label, w, same)
                  for label, w in (("cold", 1.3), ("cold2", 1.1), ("cold3", 1.2))]}
        row["runs"][1]["overheads"] = [{"overhead_ms": {"total": 4.0}}]
        R.summarize(row)
        self.assertEqual((row["cold_s"], row["cold_min_s"], row["cold_max_s"]), (1.2, 1.1, 1.3))
        self.assertEqual((row["cold_ratio"], row["cold_overhead_ms"]), (1.2, 4.0))
        self.assertNotIn("warm_s", row)

    def test_memplace_runs_are_interleaved_with_originals_and_paired(self):
        opts = argparse.Namespace(reps=5, cold=1, warm=2)
        self.assertEqual([v[0] + ":" + l for v, l in R.interleaved_plan(opts, True)],
                         ["o:original", "m:cold", "o:original", "m:warm1", "o:original",
                          "m:warm2", "o:original", "o:original"])
        self.assertEqual(len(R.interleaved_plan(opts, False)), 5)
        same = {"stdout": "1"}
        row = {"runs": [self.run_row("original", "original", 1.0, same),
                        self.run_row("memplace", "warm1", 1.1, same),
                        self.run_row("original", "original", 2.0, same),
                        self.run_row("memplace", "warm2", 2.0, same),
                        self.run_row("original", "original", 1.0, same),
                        self.run_row("memplace", "warm3", 1.04, same)]}
        R.summarize(row)
        # paired: 1.1/1.0, 2.0/2.0, 1.04/1.0: median 1.04 (medians alone: 1.1/1.0)
        self.assertEqual(row["warm_ratio"], 1.04)
        self.assertEqual(row["noise"], 0.75)  # |2/1 - 1| and |1/2 - 1|

    def test_a_run_is_timed_to_its_exit_and_killed_at_its_limit(self):
        with tempfile.TemporaryDirectory() as d:
            quick = R.run_once(Path("/bin/sh"), ["-c", "exit 3"], Path(d) / "a", {}, 10)
            self.assertEqual(quick["rc"], 3)
            self.assertLess(quick["wall_s"], 5)
            hung = R.run_once(Path("/bin/sleep"), ["30"], Path(d) / "b", {}, 1)
            self.assertEqual(hung["rc"], "timeout")
            self.assertLess(hung["wall_s"], 10)

    def test_an_even_count_median_and_a_single_run(self):
        self.assertEqual(R.spread([0.366, 0.416, 0.466, 0.416]),
                         {"median": 0.416, "min": 0.366, "max": 0.466})
        self.assertEqual(R.spread([0.3, 0.4]), {"median": 0.35, "min": 0.3, "max": 0.4})
        self.assertEqual(R.spread([0.5]), {"median": 0.5, "min": 0.5, "max": 0.5})

    def test_an_original_that_fails_is_said_beside_bitwise(self):
        same = {"stdout": "1"}
        row = {"program": "p", "input": "i", "runs": [
            self.run_row("original", "original", 1.0, same) for _ in range(3)]
            + [self.run_row("memplace", "cold", 1.0, same)]}
        for r in row["runs"][:2]:
            r["rc"] = 1
        R.summarize(row)
        self.assertTrue(row["bitwise"])
        self.assertEqual(row["original_failed"], "exit 1 in 2 of 3 runs")
        self.assertIn("| yes (the original fails: exit 1 in 2 of 3 runs) |",
                      R.markdown_table([row]))


FAKE = """#!/bin/sh
# A made-up program: prints its result and a time, writes result.txt; as the memplace build it
# writes a report where MEMPLACE_REPORT says and checks the cold cache is fresh.
echo "answer $1"
echo "Time: $$"
echo "cells $1" > result.txt
if [ -n "$MEMPLACE_REPORT" ]; then
  [ "$MEMPLACE" = auto ] || exit 3
  if [ -f "$MEMPLACE_CACHE/seen" ]; then status=cache; else status=trace; fi
  mkdir -p "$MEMPLACE_CACHE" && touch "$MEMPLACE_CACHE/seen"
  echo "{\\"kernels\\": [{\\"kernel\\": \\"k\\", \\"status\\": \\"$status\\", \\"applied\\": {}}]}" \\
    > "$MEMPLACE_REPORT"
  [ "$WRONG" = 1 ] && echo "cells wrong" > result.txt
fi
exit 0
"""


class Refresh(unittest.TestCase):
    def test_the_manifest_takes_the_inputs_and_timing_lines_of_programs_json(self):
        runs = json.loads((RUNS.parent / "programs.json").read_text())["rodinia"]["runs"]
        with tempfile.TemporaryDirectory() as d:
            carry = Path(d)
            old = {"program": "streamcluster", "suite": "rodinia", "original": "bin/o.gz",
                   "memplace": None, "failures": [], "rewrite": [{"unit": "u"}],
                   "inputs": [{"name": "old", "argv": []}], "outputs": [], "drop": ["time:"],
                   "observes": "", "fixed_time": False}
            (carry / "manifest.json").write_text(json.dumps({"programs": [old]}))
            p = subprocess.run([sys.executable, str(RUNS), "refresh", "--carry", str(carry)],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("streamcluster: inputs, outputs, drop, observes", p.stdout)
            entry = json.loads((carry / "manifest.json").read_text())["programs"][0]
            self.assertEqual(entry["drop"], runs["streamcluster"]["drop"])
            self.assertEqual(entry["inputs"], runs["streamcluster"]["inputs"])
            self.assertEqual((entry["original"], entry["rewrite"]), ("bin/o.gz", [{"unit": "u"}]))
            self.assertTrue((carry / "runs.py").is_file())
            old["program"] = "nope"
            (carry / "manifest.json").write_text(json.dumps({"programs": [old]}))
            p = subprocess.run([sys.executable, str(RUNS), "refresh", "--carry", str(carry)],
                               capture_output=True, text=True, timeout=60)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("nope: not in programs.json's runs", p.stderr)


class WholeRun(unittest.TestCase):
    def test_run_compares_and_reports(self):
        with tempfile.TemporaryDirectory() as d:
            out, results = Path(d) / "carry", Path(d) / "results"
            (out / "bin").mkdir(parents=True)
            programs = []
            for name, wrong in (("good", False), ("bad", True)):
                for variant in ("original", "memplace"):
                    script = FAKE.replace('"$WRONG" = 1', "1 = 1" if wrong else "1 = 0")
                    with gzip.open(out / "bin" / f"{name}.{variant}.gz", "wt") as f:
                        f.write(script)
                programs.append({"program": name, "original": f"bin/{name}.original.gz",
                                 "memplace": f"bin/{name}.memplace.gz", "failures": [],
                                 "outputs": ["result.txt"], "drop": ["^Time:"], "observes": "",
                                 "inputs": [{"name": "n3", "argv": ["3"]}]})
            (out / "manifest.json").write_text(json.dumps({"programs": programs}))
            env = dict(os.environ, MEMPLACE_RUNS_BUDGET_S="60")
            p = subprocess.run([sys.executable, str(RUNS), "run", str(out), str(results),
                                "--reps", "3", "--cold", "2", "--warm", "2", "--scratch", str(Path(d) / "s")],
                               capture_output=True, text=True, env=env, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            doc = json.loads((results / "runs.json").read_text())
            rows = {r["program"]: r for r in doc["rows"]}
            self.assertTrue(rows["good"]["bitwise"])
            self.assertEqual([r["variant"][0] for r in rows["good"]["runs"]], list("omomomom"))
            # every cold run starts with an empty cache, the warm ones find the last one's
            self.assertEqual([r["decisions"]["k"] for r in rows["good"]["runs"][1::2]],
                             ["trace", "trace", "cache", "cache"])
            self.assertEqual(rows["good"]["decisions"], {"k": "trace -> cache"})
            self.assertFalse(rows["bad"]["bitwise"])
            self.assertEqual(rows["bad"]["first_difference"]["memplace"], "cells wrong")
            self.assertEqual(rows["good"]["original_min_s"] <= rows["good"]["original_s"]
                             <= rows["good"]["original_max_s"], True)
            cold = [r for r in rows["good"]["runs"] if r["label"] == "cold"][0]
            self.assertEqual([(k["kernel"], k["status"]) for k in cold["overheads"]],
                             [("k", "trace")])
            self.assertFalse((results / "reports").exists())
            with tarfile.open(results / "reports.tgz") as tar:
                names = tar.getnames()
            self.assertEqual(len(names), 8)  # 2 programs x (2 cold + 2 warm)
            self.assertIn("reports/good-n3.warm2.json", names)
            summary = (results / "summary.md").read_text()
            self.assertIn("memplace 2 cold (each with an empty cache) + 2 warm runs, each right after "
                      "a run of the original (at least 3 in all)", summary)
            self.assertIn("| good | n3 |", summary)

    def test_a_spent_budget_skips_and_says_so(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "carry"
            (out / "bin").mkdir(parents=True)
            with gzip.open(out / "bin" / "p.original.gz", "wt") as f:
                f.write(FAKE)
            (out / "manifest.json").write_text(json.dumps({"programs": [
                {"program": "p", "original": "bin/p.original.gz", "memplace": None,
                 "failures": [], "outputs": [], "drop": [], "observes": "",
                 "inputs": [{"name": "n1", "argv": ["1"]}]}]}))
            env = dict(os.environ, MEMPLACE_RUNS_BUDGET_S="1")
            p = subprocess.run([sys.executable, str(RUNS), "run", str(out), str(Path(d) / "r"),
                                "--scratch", str(Path(d) / "s")],
                               capture_output=True, text=True, env=env, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            doc = json.loads((Path(d) / "r" / "runs.json").read_text())
            self.assertEqual(doc["skipped"], ["p/n1: budget"])


if __name__ == "__main__":
    unittest.main()
