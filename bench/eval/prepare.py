#!/usr/bin/env python3
"""Prepares the evaluation for the device (issue 8; docs/EVALUATION.md): on a machine with clang-19
(the rewriter) and the CMake build, writes one folder that bench/evaluate.sh runs on the GPU.

  prepare.py --carry DIR [--memplace build/bin/memplace] [--lib build/lib] [--compile FILE]
             [--cases quick|full] [--programs mm,spmv,...]

DIR gets:
  src/PROG.cu, src/PROG.json   each program rewritten (`memplace rewrite --json`, with
                               `--compile FILE`: extra specialised instantiations per kernel)
  kernels/                     the original programs and their harness (bench/kernels)
  include/                     the runtime's headers and the common/ ones they include
  lib/                         the Placer, runtime and engine static libraries (debug info stripped)
  eval/                        evaluate.sh's helpers (collect.py, analyze.py), cases.json and
                               compare.msl (--compare-spec: the sweep ranks with it too)

cases.json lists the runs in order (breadth first: one input of every program, then a second,
then the further SpMV and particle-filter inputs), and per program the original placement as
MEMPLACE_SWEEP_ORIGINAL takes it: every `const T* __restrict__` parameter on the read-only path
(`readonly`), everything else global -- the placement the programs' authors wrote.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS = os.path.join(ROOT, "bench", "kernels")

PROGRAMS = ["mm", "transpose", "conv2d", "kmeans", "particlefilter", "cfd", "reduction", "fft",
            "scan", "radixsort", "triad", "md", "spmv", "bfs", "hydro_force", "hydro_control"]

# Inputs per program, in the order they are run. The first two of each are the breadth pass;
# SpMV and the particle filter have six each. Inputs that fit the L2 (small) are left out; mm
# large (4096^3, 15 ms a launch) is left out for the device budget (docs/EVALUATION.md).
FULL = {
    "mm": ["medium", "rect"],
    "transpose": ["large", "tall"],
    "conv2d": ["large", "hd"],
    "kmeans": ["large", "many"],
    "particlefilter": ["p1m", "p16m", "p100k", "p4m", "p1m-peaked", "p16m-flat"],
    "cfd": ["grid", "shuffled"],
    "reduction": ["large", "odd"],
    "fft": ["large", "long"],
    "scan": ["large", "odd"],
    "radixsort": ["large", "skewed"],
    "triad": ["large", "medium"],
    "md": ["large", "shuffled"],
    "spmv": ["random", "powerlaw", "banded", "blockdiag", "laplace2d", "sparse_empty"],
    "bfs": ["random", "rmat"],
    "hydro_force": ["large", "shuffled"],
    "hydro_control": ["large", "region"],
}


def cases(which, programs):
    out = []
    depth = max(len(v) for v in FULL.values())
    for d in range(depth):
        for p in programs:
            ins = FULL[p]
            if d < len(ins):
                if which == "quick" and d >= 1 and p not in ("spmv", "particlefilter"):
                    continue
                out.append({"program": p, "input": ins[d]})
    return out


def kernel_params(src, kernel):
    """The parameter declarations of `__global__ void kernel(...)` in src."""
    m = re.search(r"__global__\s+void\s+" + re.escape(kernel) + r"\s*\(", src)
    if not m:
        return []
    i = m.end()
    depth = 1
    j = i
    while depth > 0 and j < len(src):
        depth += {"(": 1, ")": -1}.get(src[j], 0)
        j += 1
    return [p.strip() for p in src[i:j - 1].split(",")]


def original_placement(src, kernel, arrays):
    """kernel.array=readonly for every `const T* __restrict__` array parameter."""
    params = kernel_params(src, kernel)
    items = []
    for a in arrays:
        for p in params:
            if re.search(r"\b" + re.escape(a) + r"$", p) and "__restrict__" in p and "const" in p:
                items.append("%s.%s=readonly" % (kernel, a))
    return items


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--carry", required=True)
    ap.add_argument("--memplace", default=os.path.join(ROOT, "build", "bin", "memplace"))
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "lib"))
    ap.add_argument("--compile", help="JSON {kernel: [{array: place}, ...]}: extra instantiations")
    ap.add_argument("--cases", choices=["quick", "full"], default="full")
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--compare-spec", default=os.path.join(ROOT, "tests", "probe", "data",
                                                           "h100_probed.msl"),
                    help="a second spec (MSL file) whose model's ranking the sweep also records "
                         "(MEMPLACE_SWEEP_COMPARE_SPEC; default: the H100 spec `memplace probe` "
                         "wrote, issue 9); 'none' for none")
    ap.add_argument("--originals-from",
                    help="an earlier run's runs folder: its orig_*.json go to eval/orig "
                         "(evaluate.sh with EVAL_ORIGINALS=0 uses them)")
    a = ap.parse_args()
    programs = [p for p in a.programs.split(",") if p]
    carry = os.path.abspath(a.carry)
    for sub in ("src", "kernels", "include", "lib", "eval"):
        shutil.rmtree(os.path.join(carry, sub), ignore_errors=True)
        os.makedirs(os.path.join(carry, sub))

    originals = {}
    compiled_count = {}
    for p in programs:
        cmd = [a.memplace, "rewrite", os.path.join(KERNELS, p + ".cu"), "-o",
               os.path.join(carry, "src"), "--force", "--json"]
        if a.compile:
            cmd += ["--compile", a.compile]
        cmd += ["--", "-I" + KERNELS]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("rewrite of %s failed:\n%s" % (p, r.stderr))
        if r.stderr.strip():
            print("%s: %s" % (p, r.stderr.strip()), file=sys.stderr)
        rep = json.loads(r.stdout)
        with open(os.path.join(carry, "src", p + ".json"), "w") as f:
            json.dump(rep, f, indent=1)
        src = open(os.path.join(KERNELS, p + ".cu")).read()
        items = []
        for k in rep["kernels"]:
            if not k["rewritten"]:
                sys.exit("%s: kernel %s was not rewritten: %s" % (p, k["name"], k.get("reason")))
            for arr in k["arrays"]:
                if not arr["accessor"]:
                    sys.exit("%s: %s.%s has no accessor (a sweep cannot restore it)" %
                             (p, k["name"], arr["name"]))
            items += original_placement(src, k["name"], [x["name"] for x in k["arrays"]])
            compiled_count[k["name"]] = len(k["compiled"]) + 1
        originals[p] = ",".join(items)

    shutil.copytree(os.path.join(KERNELS, "common"), os.path.join(carry, "kernels", "common"))
    for p in programs:
        shutil.copy(os.path.join(KERNELS, p + ".cu"), os.path.join(carry, "kernels"))
    shutil.copytree(os.path.join(ROOT, "runtime", "include", "memplace"),
                    os.path.join(carry, "include", "memplace"))
    # The common/ headers the device headers include: the ones runtime/jit_headers.txt lists for
    # NVRTC, the same set.
    os.makedirs(os.path.join(carry, "include", "common"))
    with open(os.path.join(ROOT, "runtime", "jit_headers.txt")) as f:
        common = [l.strip() for l in f if l.strip().startswith("common/")]
    for h in common:
        shutil.copy(os.path.join(ROOT, h), os.path.join(carry, "include", "common"))
    for l in ["memplace_placer", "memplace_runtime", "memplace_runtime_core", "memplace_search",
              "memplace_model", "memplace_trace", "memplace_spec", "memplace_common"]:
        src = os.path.join(a.lib, "lib%s.a" % l)
        dst = os.path.join(carry, "lib", "lib%s.a" % l)
        subprocess.run(["strip", "--strip-debug", "-o", dst, src], check=True)
    if a.originals_from:
        import glob
        os.makedirs(os.path.join(carry, "eval", "orig"))
        for f in glob.glob(os.path.join(a.originals_from, "orig_*.json")):
            shutil.copy(f, os.path.join(carry, "eval", "orig"))
    for f in ("collect.py", "analyze.py", "report.py", "EVALUATION.head.md"):
        shutil.copy(os.path.join(ROOT, "bench", "eval", f), os.path.join(carry, "eval"))
    shutil.copy(os.path.join(ROOT, "bench", "evaluate.sh"), os.path.join(carry, "eval"))
    compare = None
    if a.compare_spec and a.compare_spec != "none":
        compare = "compare.msl"
        shutil.copy(a.compare_spec, os.path.join(carry, "eval", compare))
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    meta = {"commit": commit + ("+changes" if dirty else ""), "programs": programs,
            "originals": originals, "compiled": compiled_count,
            "compile_file": os.path.basename(a.compile) if a.compile else None,
            "compare_spec": os.path.basename(a.compare_spec) if compare else None,
            "cases": cases(a.cases, programs)}
    with open(os.path.join(carry, "eval", "cases.json"), "w") as f:
        json.dump(meta, f, indent=1)
    total = 0
    for dp, _, fs in os.walk(carry):
        total += sum(os.path.getsize(os.path.join(dp, x)) for x in fs)
    print("prepared %s: %d programs, %d cases, %.1f MB" % (carry, len(programs), len(meta["cases"]),
                                                         total / 1e6))


if __name__ == "__main__":
    main()
