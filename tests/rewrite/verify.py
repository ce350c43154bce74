#!/usr/bin/env python3
"""Every placement of every rewritten corpus kernel against the original, bitwise.

For each runnable program of tests/frontend/kernels/ (each prints one line ending in
`outputs <FNV-1a of every output>` after poisoning its outputs):

  rewrite  rewrite it twice with `memplace rewrite` (--launches-only: the original; full: the
           placement-agnostic program, with --json describing kernels, arrays and places), build
           both (backend emu: build/bin/memplace-emu-c++; backend nvcc: nvcc -arch=sm_90, the
           original being the untouched source), and write the plan: one run per placement.
  run      run the original, then every planned placement of every kernel through
           MEMPLACE=force:kernel.array=place,... -- through the specialised instantiation when the
           placement is compiled, through the dynamic accessor (MEMPLACE_DISPATCH=dynamic), and
           (backend nvcc, kernels with a JIT source) through a just-in-time NVRTC instantiation
           when it is not compiled (MEMPLACE_JIT=always, synchronous, one disk cache per plan)
           -- and compare stdout with the original's, byte for byte.
  memcheck compute-sanitizer --tool memcheck over the rewritten programs: per kernel, one
           placement per place (every array there where feasible) and the default.
  all      prepare, then run.

Placements: the full cartesian product of each kernel's feasible places when it has at most
--max-product (64) elements; beyond that a covering sample: every pair of (array, place) of two
different arrays appears together at least once (so every array in every place at least once),
plus every compiled placement and the default. `runs` below counts both dispatch modes.

The GPU script (run_on_gpu.sh) runs `rewrite --backend nvcc` here (clang is needed) and `compile`
and `run` on the GPU machine (nvcc, no clang).
"""
import argparse
import concurrent.futures
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "frontend", "kernels")


def log(msg):
    print(msg, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


# ---- placements ---------------------------------------------------------------------------

def covering_sample(lists, seed=0):
    """A small set of tuples (one entry per list) in which every pair of values of two different
    positions occurs at least once (a greedy pairwise covering array), deterministic."""
    n = len(lists)
    if n == 1:
        return [(v,) for v in lists[0]]
    uncovered = set()
    for i, j in itertools.combinations(range(n), 2):
        for a in lists[i]:
            for b in lists[j]:
                uncovered.add((i, a, j, b))
    rng = random.Random(seed)
    rows = []
    while uncovered:
        # Start from an uncovered pair, fill the rest greedily (a few random tries per row).
        best, best_gain = None, -1
        i0, a0, j0, b0 = min(uncovered, key=lambda t: (t[0], str(t[1]), t[2], str(t[3])))
        for _ in range(20):
            row = [None] * n
            row[i0], row[j0] = a0, b0
            order = [k for k in range(n) if row[k] is None]
            rng.shuffle(order)
            for k in order:
                def gain(v):
                    g = 0
                    for m in range(n):
                        if row[m] is None or m == k:
                            continue
                        key = (m, row[m], k, v) if m < k else (k, v, m, row[m])
                        g += key in uncovered
                    return g
                cands = list(lists[k])
                rng.shuffle(cands)
                row[k] = max(cands, key=gain)
            g = sum(1 for i, j in itertools.combinations(range(n), 2)
                    if (i, row[i], j, row[j]) in uncovered)
            if g > best_gain:
                best, best_gain = tuple(row), g
        rows.append(best)
        for i, j in itertools.combinations(range(n), 2):
            uncovered.discard((i, best[i], j, best[j]))
    return rows


def placements(kernel, max_product):
    """(placements, 'full'|'sample', product size) of one rewritten kernel's accessor arrays."""
    arrays = [a for a in kernel["arrays"] if a["accessor"]]
    lists = [a["places"] for a in arrays]
    product = 1
    for l in lists:
        product *= len(l)
    if product <= max_product:
        return [tuple(p) for p in itertools.product(*lists)], "full", product
    rows = covering_sample(lists)
    extra = [tuple(c) for c in kernel["compiled"]] + [tuple("global" for _ in arrays)]
    for e in extra:
        if e not in rows:
            rows.append(e)
    return rows, "sample", product


# ---- prepare --------------------------------------------------------------------------------

def write_jit_headers(path):
    """The device headers a JIT module includes, as runtime/embed_jit_headers.cmake embeds them
    into the CMake build of the runtime (the list: runtime/jit_headers.txt)."""
    with open(os.path.join(ROOT, "runtime", "jit_headers.txt")) as f:
        names = [l.strip() for l in f if l.strip()]
    body = ['// Generated by tests/rewrite/verify.py (as runtime/embed_jit_headers.cmake). Do not edit.',
            '#include "runtime/src/jit.h"', "namespace memplace::detail::jit {",
            "extern const EmbeddedHeader kEmbeddedHeaders[];", "extern const int kEmbeddedHeaderCount;",
            "const EmbeddedHeader kEmbeddedHeaders[] = {"]
    for n in names:
        p = os.path.join(ROOT, "runtime", "include", n)
        if not os.path.exists(p):
            p = os.path.join(ROOT, n)
        with open(p) as f:
            text = f.read()
        if ')hdr"' in text:
            raise SystemExit("%s contains the raw-string delimiter" % p)
        body.append('    {"%s", R"hdr(%s)hdr"},' % (n, text))
    body += ["};", "const int kEmbeddedHeaderCount = %d;" % len(names), "}"]
    with open(path, "w") as f:
        f.write("\n".join(body) + "\n")


def runtime_objects_nvcc(out, nvcc):
    objs = []
    srcs = [os.path.join(ROOT, "runtime", "src", f) for f in sorted(os.listdir(os.path.join(ROOT, "runtime", "src"))) if f.endswith(".cpp")]
    srcs.append(os.path.join(ROOT, "common", "place.cpp"))
    headers = os.path.join(out, "rt_jit_headers.cpp")
    write_jit_headers(headers)
    srcs.append(headers)
    for s in srcs:
        o = os.path.join(out, "rt_" + os.path.basename(s).replace(".cpp", ".o"))
        r = sh([nvcc, "-std=c++20", "-O2", "-arch=sm_90", "-I" + ROOT, "-I" + os.path.join(ROOT, "runtime", "include"),
                "-DMEMPLACE_JIT_HEADERS=1", "-x", "cu", "-c", s, "-o", o])
        if r.returncode != 0:
            raise SystemExit("nvcc failed on %s:\n%s" % (s, r.stderr))
        objs.append(o)
    return objs


def rewrite_program(args, prog, out):
    """Rewrite one program (original with --launches-only, and placement-agnostic) and plan its
    runs; returns its plan entry or raises. Needs `memplace` (clang), not the CUDA compiler."""
    src = os.path.join(CORPUS, prog + ".cu")
    d = os.path.join(out, prog)
    for mode in ("orig", "rw"):
        os.makedirs(os.path.join(d, mode), exist_ok=True)
    r = sh([args.memplace, "rewrite", src, "-o", os.path.join(d, "orig"), "--launches-only", "--force"])
    if r.returncode != 0:
        raise RuntimeError("rewrite --launches-only failed:\n" + r.stderr)
    r = sh([args.memplace, "rewrite", src, "-o", os.path.join(d, "rw"), "--force", "--json"])
    if r.returncode != 0:
        raise RuntimeError("rewrite failed:\n" + r.stderr)
    desc = json.loads(r.stdout)
    with open(os.path.join(d, "rewrite.json"), "w") as f:
        json.dump(desc, f, indent=1)
    runs = []
    summary = []
    for k in desc["kernels"]:
        if not k["rewritten"]:
            continue
        arrays = [a["name"] for a in k["arrays"] if a["accessor"]]
        pls, how, product = placements(k, args.max_product)
        compiled = {tuple(c) for c in k["compiled"]} | {tuple("global" for _ in arrays)}
        nruns = 0
        for p in pls:
            env = "force:" + ",".join("%s.%s=%s" % (k["name"], a, pl) for a, pl in zip(arrays, p))
            spec = p in compiled
            runs.append({"kernel": k["name"], "placement": list(p), "MEMPLACE": env,
                         "dispatch": "auto", "specialised": spec})
            runs.append({"kernel": k["name"], "placement": list(p), "MEMPLACE": env,
                         "dispatch": "dynamic", "specialised": False})
            nruns += 2
            if args.backend == "nvcc" and k.get("jit") and not spec:
                runs.append({"kernel": k["name"], "placement": list(p), "MEMPLACE": env,
                             "dispatch": "jit", "specialised": False})
                nruns += 1
        summary.append({"kernel": k["name"], "arrays": arrays, "jit": bool(k.get("jit")),
                        "jit_reason": k.get("jit_reason", ""),
                        "places": [a["places"] for a in k["arrays"] if a["accessor"]],
                        "product": product, "how": how, "placements": len(pls), "runs": nruns,
                        "compiled": len(k["compiled"])})
    return {"program": prog, "original": os.path.join(prog, "original"),
            "rewritten": os.path.join(prog, "rewritten"), "kernels": summary, "runs": runs,
            "raw": [(k["name"], a["name"], a.get("reason", "")) for k in desc["kernels"]
                    for a in k["arrays"] if not a["accessor"]],
            "untouched": [(k["name"], k.get("reason", "")) for k in desc["kernels"] if not k["rewritten"]]}


def nvcc_fmad(args):
    """nvcc's contraction flag: none by default, -fmad=false with --no-fmad."""
    return ["-fmad=false"] if args.no_fmad else []


def compile_program(args, entry, out, rt):
    """Build the original and the rewritten program of one plan entry (emu or nvcc)."""
    prog = entry["program"]
    d = os.path.join(out, prog)
    t0 = time.time()
    inc = ["-I" + ROOT, "-I" + os.path.join(ROOT, "runtime", "include")]
    orig_bin = os.path.join(out, entry["original"])
    rw_bin = os.path.join(out, entry["rewritten"])
    if args.backend == "emu":
        cmds = [[args.emu_cxx, "-O1", "-w", os.path.join(d, "orig", prog + ".cu"), "-o", orig_bin],
                [args.emu_cxx, "-O1", "-w"] + inc + [os.path.join(d, "rw", prog + ".cu")] +
                ["-Wl," + x for x in rt] + ["-o", rw_bin]]
    else:
        # The original is the untouched source, compiled as its author would (with
        # --no-fmad, both without multiply-add contraction: decision 020).
        link = ["-Xcompiler=-static-libstdc++,-static-libgcc", "-ldl"]
        flags = [args.nvcc, "-std=c++20", "-O2", "-arch=sm_90"] + nvcc_fmad(args)
        cmds = [flags + [os.path.join(CORPUS, prog + ".cu"), "-o", orig_bin] + link,
                flags + inc +
                [os.path.join(d, "rw", prog + ".cu")] + rt + ["-o", rw_bin] + link]
    for c in cmds:
        r = sh(c)
        if r.returncode != 0:
            raise RuntimeError("build failed: %s\n%s" % (" ".join(c), r.stderr[-4000:]))
    entry["build_s"] = round(time.time() - t0, 1)
    return entry


def parallel(args, items, fn, what):
    """fn over items on --jobs threads; returns (results, names of the failures)."""
    done, failures = [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {ex.submit(fn, it): it for it in items}
        for f in concurrent.futures.as_completed(futs):
            name = futs[f] if isinstance(futs[f], str) else futs[f]["program"]
            try:
                done.append(f.result())
                log("%s %-18s" % (what, name))
            except Exception as exc:  # noqa: BLE001 - reported and counted
                failures.append(name)
                log("FAILED %s %s: %s" % (what, name, exc))
    return done, failures


def shard(text):
    """--shard K/N: the K-th of N parts of the plan's programs (1 <= K <= N)."""
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError("not K/N: %r" % text)
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError("not 1 <= K <= N: %r" % text)
    return k, n


def selected_programs(args, programs):
    """The plan's programs that --programs and --shard select (the shards split the programs in
    name order, round robin, so that each part runs where one part must fit a time limit)."""
    chosen = [p for p in programs if not args.programs or p["program"] in args.programs]
    if args.shard:
        k, n = args.shard
        names = sorted(p["program"] for p in chosen)
        part = {name for i, name in enumerate(names) if i % n == k - 1}
        chosen = [p for p in chosen if p["program"] in part]
    return chosen


def report_path(args, out, name):
    """results.md, or results.shard2of3.md for --shard 2/3 (the shards write side by side)."""
    if args.shard:
        stem, ext = os.path.splitext(name)
        name = "%s.shard%dof%d%s" % (stem, args.shard[0], args.shard[1], ext)
    return os.path.join(out, name)


def plan_path(args):
    return os.path.join(os.path.abspath(args.dir or args.out), "plan.json")


def rewrite_step(args):
    """Rewrite every program and write plan.json (no compilation)."""
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    progs = args.programs or sorted(f[:-3] for f in os.listdir(CORPUS) if f.endswith(".cu"))
    entries, failures = parallel(args, progs, lambda p: rewrite_program(args, p, out), "rewrote")
    plan = {"backend": args.backend, "max_product": args.max_product,
            "programs": sorted(entries, key=lambda e: e["program"])}
    with open(os.path.join(out, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1)
    return failures


def compile_step(args):
    """Compile the programs of an existing plan.json (the GPU machine has no clang: the lead
    rewrites here, carries the folder, and compiles there with nvcc)."""
    path = plan_path(args)
    out = os.path.dirname(path)
    with open(path) as f:
        plan = json.load(f)
    if plan["backend"] != args.backend:
        raise SystemExit("%s was planned for backend %s, not %s" % (path, plan["backend"], args.backend))
    if args.backend == "emu":
        rt = [args.runtime_emu, args.runtime_core]
    else:
        rt = runtime_objects_nvcc(out, args.nvcc)
    entries, failures = parallel(args, plan["programs"], lambda e: compile_program(args, e, out, rt),
                                 "built")
    plan["programs"] = sorted(entries, key=lambda e: e["program"])
    plan["fmad"] = not args.no_fmad
    with open(path, "w") as f:
        json.dump(plan, f, indent=1)
    return failures


def prepare(args):
    failures = rewrite_step(args)
    args.dir = args.out
    return failures + compile_step(args)


# ---- run ------------------------------------------------------------------------------------

FALLBACK = re.compile(r"^memplace: (\S+): array (\S+) requested (\S+), placed global: (.*)$")


def execute(command, env_extra, timeout):
    env = dict(os.environ)
    env.pop("MEMPLACE", None)
    env.pop("MEMPLACE_DISPATCH", None)
    for v in ("MEMPLACE_JIT", "MEMPLACE_JIT_SYNC", "MEMPLACE_JIT_CACHE"):
        env.pop(v, None)
    env.update(env_extra)
    try:
        cmd = command if isinstance(command, list) else [command]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return -1, "", "timeout"


def run_plan(args):
    out = os.path.abspath(args.dir or args.out)
    with open(os.path.join(out, "plan.json")) as f:
        plan = json.load(f)
    plan["programs"] = selected_programs(args, plan["programs"])
    results = []
    bad = 0
    for prog in plan["programs"]:
        t0 = time.time()
        orig = os.path.join(out, prog["original"])
        rw = os.path.join(out, prog["rewritten"])
        rc, ref, err = execute(orig, {}, args.timeout)
        entry = {"program": prog["program"], "kernels": prog["kernels"], "raw": prog["raw"],
                 "untouched": prog["untouched"], "reference": ref.strip(), "mismatches": [],
                 "fallbacks": {}, "runs": 0, "per_kernel": {}}
        if rc != 0 or "PASS" not in ref or " outputs " not in ref:
            entry["mismatches"].append({"run": "original", "rc": rc, "stdout": ref, "stderr": err[-2000:]})
            results.append(entry)
            bad += 1
            log("FAIL %s: the original did not pass (rc %d): %s %s" % (prog["program"], rc, ref, err[-500:]))
            continue
        runs = [{"kernel": "-", "placement": [], "MEMPLACE": "", "dispatch": "auto", "specialised": True}] + prog["runs"]

        def one(run):
            env = {"MEMPLACE_QUIET": "0"}
            if run["MEMPLACE"]:
                env["MEMPLACE"] = run["MEMPLACE"]
            if run["dispatch"] == "dynamic":
                env["MEMPLACE_DISPATCH"] = "dynamic"
            if run["dispatch"] == "jit":
                env.update({"MEMPLACE_JIT": "always", "MEMPLACE_JIT_SYNC": "1",
                            "MEMPLACE_JIT_CACHE": os.path.join(out, "jitcache")})
                if not plan.get("fmad", True):  # NVRTC as the program was compiled
                    env["MEMPLACE_JIT_OPTIONS"] = "--fmad=false"
            return run, execute(rw, env, args.timeout)

        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            for run, (rc, so, se) in ex.map(one, runs):
                entry["runs"] += 1
                pk = entry["per_kernel"].setdefault(run["kernel"], {"runs": 0, "specialised": 0, "jit": 0})
                pk["runs"] += 1
                pk["specialised"] += 1 if run["specialised"] and run["dispatch"] == "auto" else 0
                pk["jit"] = pk.get("jit", 0) + (1 if run["dispatch"] == "jit" else 0)
                for line in se.splitlines():
                    m = FALLBACK.match(line)
                    if m:
                        key = "%s.%s=%s" % (m.group(1), m.group(2), m.group(3))
                        entry["fallbacks"][key] = m.group(4)
                # A JIT run whose instantiation failed or was unavailable ran dynamic: a failure.
                jit_failed = run["dispatch"] == "jit" and "just-in-time" in se
                if rc != 0 or so != ref or jit_failed:
                    entry["mismatches"].append({"run": run, "rc": rc, "stdout": so, "stderr": se[-2000:]})
        entry["seconds"] = round(time.time() - t0, 1)
        if entry["mismatches"]:
            bad += 1
            m = entry["mismatches"][0]
            log("FAIL %s: %d of %d runs differ; first: %s rc %s\n  got:      %s\n  expected: %s\n  stderr: %s" % (
                prog["program"], len(entry["mismatches"]), entry["runs"], m["run"], m["rc"],
                m["stdout"].strip(), ref.strip(), m["stderr"][-800:]))
        else:
            log("ok   %-18s %4d runs bitwise equal to the original (%.0f s)" % (prog["program"], entry["runs"], entry["seconds"]))
        results.append(entry)
    write_report(args, out, plan, results)
    return bad


def memcheck_runs(prog):
    """Per kernel, one run per place: every array in that place where feasible (else global),
    plus the default: each accessor and its materialisation under the sanitizer."""
    runs = [{"kernel": "-", "MEMPLACE": ""}]
    for k in prog["kernels"]:
        for place in sorted({pl for places in k["places"] for pl in places} - {"global"}):
            p = [place if place in places else "global" for places in k["places"]]
            env = "force:" + ",".join("%s.%s=%s" % (k["kernel"], a, pl) for a, pl in zip(k["arrays"], p))
            runs.append({"kernel": k["kernel"], "MEMPLACE": env})
    return runs


def memcheck(args):
    """compute-sanitizer --tool memcheck over the rewritten programs (see memcheck_runs), each
    placement through its specialised instantiation when compiled, else the dynamic accessor."""
    path = plan_path(args)
    out = os.path.dirname(path)
    with open(path) as f:
        plan = json.load(f)
    jobs = []
    for prog in selected_programs(args, plan["programs"]):
        for run in memcheck_runs(prog):
            jobs.append((prog, run))

    def one(job):
        prog, run = job
        env = {"MEMPLACE": run["MEMPLACE"]} if run["MEMPLACE"] else {}
        cmd = [args.sanitizer, "--tool", "memcheck", "--error-exitcode", "3",
               os.path.join(out, prog["rewritten"])]
        rc, so, se = execute(cmd, env, args.timeout * 4)
        return prog["program"], run, rc, so + se

    bad = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for name, run, rc, text in ex.map(one, jobs):
            summary = [l for l in text.splitlines() if "ERROR SUMMARY" in l]
            if rc != 0:
                bad.append((name, run["MEMPLACE"], rc, text[-1500:]))
            log("memcheck %-18s %-60s rc %d %s" % (name, run["MEMPLACE"][:60] or "(default)", rc,
                                                  summary[-1] if summary else ""))
    with open(report_path(args, out, "memcheck.md"), "w") as f:
        f.write("compute-sanitizer --tool memcheck: %d runs over %d programs, %d failed\n" % (
            len(jobs), len({j[0]["program"] for j in jobs}), len(bad)))
        for b in bad:
            f.write("\n- %s %s rc %d\n```\n%s\n```\n" % b)
    log("memcheck: %d runs, %d failed" % (len(jobs), len(bad)))
    return len(bad)


def write_report(args, out, plan, results):
    with open(report_path(args, out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    lines = ["| program | kernel | accessor arrays (feasible places) | placements | runs | "
             "specialised | JIT | result |", "|---|---|---|---|---|---|---|---|"]
    for e in results:
        ok = "PASS" if not e["mismatches"] else "FAIL (%d)" % len(e["mismatches"])
        if not e["kernels"]:
            lines.append("| %s | (none rewritten) | | | | | | %s |" % (e["program"], ok))
        for i, k in enumerate(e["kernels"]):
            arrays = ", ".join("%s (%d)" % (a, len(p)) for a, p in zip(k["arrays"], k["places"]))
            how = ("all %d" % k["placements"] if k["how"] == "full" else
                   "%d of %d (pairwise)" % (k["placements"], k["product"]))
            spec = e["per_kernel"].get(k["kernel"], {}).get("specialised", 0)
            jit = e["per_kernel"].get(k["kernel"], {}).get("jit", 0)
            jit_text = str(jit) if k.get("jit", False) else "no: " + k.get("jit_reason", "")
            lines.append("| %s | %s | %s | %s | %d | %d | %s | %s |" % (
                e["program"] if i == 0 else "", k["kernel"], arrays, how, k["runs"], spec,
                jit_text, ok if i == 0 else ""))
    n_fb = sum(len(e["fallbacks"]) for e in results)
    summary = ("%d programs, %d kernels rewritten, %d placements, %d runs (each placement "
               "through the specialised instantiation when compiled, through the dynamic "
               "accessor, and, with nvcc, just in time when not compiled, plus each program's "
               "default), %d mismatches; %d distinct runtime "
               "fallbacks (requested place not materialised, run in global: results still "
               "compared)." % (
                   len(results), sum(len(e["kernels"]) for e in results),
                   sum(k["placements"] for e in results for k in e["kernels"]),
                   sum(e["runs"] for e in results), sum(len(e["mismatches"]) for e in results),
                   n_fb))
    with open(report_path(args, out, "results.md"), "w") as f:
        f.write("Backend: %s; full product up to %d placements, a pairwise sample beyond.\n\n" % (
            plan["backend"], plan["max_product"]))
        f.write(summary + "\n\n" + "\n".join(lines) + "\n")
        if n_fb:
            f.write("\nFallbacks (kernel.array=requested: why):\n\n")
            for e in results:
                for k, v in sorted(e["fallbacks"].items()):
                    f.write("- %s: %s: %s\n" % (e["program"], k, v))
    log(summary)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["rewrite", "compile", "prepare", "run", "memcheck", "all"])
    ap.add_argument("--backend", choices=["emu", "nvcc"], default="emu")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "tests", "rewrite", "verify"))
    ap.add_argument("--dir", help="run: the prepared folder (default --out)")
    ap.add_argument("--programs", nargs="*", help="corpus programs (default: all)")
    ap.add_argument("--no-fmad", action="store_true",
                    help="compile (nvcc) and run just in time without multiply-add contraction, "
                    "the configuration in which placements are bitwise (decision 020)")
    ap.add_argument("--shard", type=shard, help="run, memcheck: the K-th of N parts (K/N) of "
                    "the selected programs, in name order, round robin")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--max-product", type=int, default=64)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--memplace", default=os.path.join(ROOT, "build", "bin", "memplace"))
    ap.add_argument("--emu-cxx", default=os.path.join(ROOT, "build", "bin", "memplace-emu-c++"))
    ap.add_argument("--runtime-emu", default=os.path.join(ROOT, "build", "lib", "libmemplace_runtime_emu.a"))
    ap.add_argument("--runtime-core", default=os.path.join(ROOT, "build", "lib", "libmemplace_runtime_core.a"))
    ap.add_argument("--sanitizer", default=shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    args = ap.parse_args()
    failures = []
    if args.step in ("prepare", "all"):
        failures = prepare(args)
    elif args.step == "rewrite":
        failures = rewrite_step(args)
    elif args.step == "compile":
        failures = compile_step(args)
    bad = 0
    if args.step in ("run", "all"):
        bad = run_plan(args)
    if args.step == "memcheck":
        bad = memcheck(args)
    sys.exit(1 if failures or bad else 0)


if __name__ == "__main__":
    main()
