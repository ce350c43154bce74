#!/usr/bin/env python3
"""Active against full profiling on the corpus (issue 6 items 3 and 5), under emulation.

Every runnable program of tests/frontend/kernels/ is rewritten, built for the emulator with the
online Placer linked in, and run twice: MEMPLACE_PROFILE=full (the Placer's traced launch records
every access of its sampled blocks) and MEMPLACE_PROFILE=active (memplace/emu/profile.h). For
each kernel signature the Placer decided, the table gives what the active profile ran (threads and
lane accesses against the full profile's), the decision and the predicted time under each, and
the wall time of the whole program run.

Checks (exit 1 when one fails): each program prints the same output under both (the real launch
computes the same result); every traced launch under active has a profile (MEMPLACE_PROFILE_REPORT)
that ran at most the threads of full profiling; and for the programs in EXACT (affine indices
only, no barriers or atomics) the active trace is byte-identical to the full trace, so the
decision and predicted time are identical too.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "frontend", "kernels")
# Programs whose every traced kernel has affine indices and no inter-thread communication: the
# extrapolated profile must equal the full trace.
EXACT = ["vector_1d", "grid_stride", "old_style", "multi_kernel"]

LIBS = ["memplace_placer_emu", "memplace_runtime_emu", "memplace_search", "memplace_model",
        "memplace_trace", "memplace_runtime_core", "memplace_spec", "memplace_common"]


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def build(args, prog, d):
    os.makedirs(os.path.join(d, "rw"), exist_ok=True)
    r = sh([args.memplace, "rewrite", os.path.join(CORPUS, prog + ".cu"), "-o", os.path.join(d, "rw"), "--force"])
    if r.returncode != 0:
        raise RuntimeError("rewrite failed:\n" + r.stderr)
    lib = os.path.join(args.build, "lib")
    link = ["-Wl,--undefined=memplace_placer_autoinstall", "-Wl,--start-group"] + \
        ["-Wl," + os.path.join(lib, "lib%s.a" % l) for l in LIBS] + ["-Wl,--end-group"]
    binary = os.path.join(d, "placed")
    r = sh([args.emu_cxx, "-O1", "-w", "-I" + ROOT, "-I" + os.path.join(ROOT, "runtime", "include"),
            os.path.join(d, "rw", prog + ".cu")] + link + ["-o", binary])
    if r.returncode != 0:
        raise RuntimeError("build failed:\n" + r.stderr[-3000:])
    return binary


def run(binary, d, mode, timeout):
    env = dict(os.environ)
    for k in ("MEMPLACE", "MEMPLACE_DISPATCH"):
        env.pop(k, None)
    env["MEMPLACE_CACHE"] = "off"  # both modes trace: neither may find the other's decisions
    tdir = os.path.join(d, "traces_" + mode)
    os.makedirs(tdir, exist_ok=True)
    for f in os.listdir(tdir):
        os.remove(os.path.join(tdir, f))
    env.update({"MEMPLACE_PROFILE": mode, "MEMPLACE_QUIET": "1", "MEMPLACE_SPEC": "h100",
                "MEMPLACE_REPORT": os.path.join(d, "report_%s.json" % mode),
                "MEMPLACE_PROFILE_REPORT": os.path.join(d, "profile_%s.jsonl" % mode),
                "MEMPLACE_TRACE_DIR": tdir,
                # every signature traced at its first launch: the corpus programs launch most
                # kernels once
                "MEMPLACE_TRACE_AFTER": "0", "MEMPLACE_TRACES_PER_KERNEL": "1000000"})
    for k in ("MEMPLACE_REPORT", "MEMPLACE_PROFILE_REPORT"):
        if os.path.exists(env[k]):
            os.remove(env[k])
    t0 = time.time()
    r = subprocess.run([binary], capture_output=True, text=True, env=env, timeout=timeout)
    wall = time.time() - t0
    report = json.load(open(env["MEMPLACE_REPORT"])) if os.path.exists(env["MEMPLACE_REPORT"]) else {}
    prof = []
    if os.path.exists(env["MEMPLACE_PROFILE_REPORT"]):
        prof = [json.loads(l) for l in open(env["MEMPLACE_PROFILE_REPORT"]) if l.strip()]
    traces = {f: open(os.path.join(tdir, f), "rb").read() for f in sorted(os.listdir(tdir))}
    return r, wall, report, prof, traces


def fmt_place(k):
    d = k.get("decision") or {}
    return ",".join("%s=%s" % (a, p) for a, p in d.items()) or "-"


def key(k):
    return k.get("signature", {}).get("key", k.get("kernel"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "tests", "emu", "active_profile"))
    ap.add_argument("--programs", nargs="*")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--memplace", default=os.path.join(ROOT, "build", "bin", "memplace"))
    ap.add_argument("--emu-cxx", default=os.path.join(ROOT, "build", "bin", "memplace-emu-c++"))
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--markdown", help="write the table here")
    args = ap.parse_args()
    progs = args.programs or sorted(f[:-3] for f in os.listdir(CORPUS) if f.endswith(".cu"))
    rows = ["| program | kernel | threads run / full | lane accesses run / full | levels | "
            "decision (full) | decision (active) | predicted µs full → active | run s full / active |",
            "|---|---|---|---|---|---|---|---|---|"]
    bad = 0
    for prog in progs:
        d = os.path.join(os.path.abspath(args.out), prog)
        try:
            binary = build(args, prog, d)
        except RuntimeError as e:
            print("FAIL %s: %s" % (prog, e))
            bad += 1
            continue
        rf, wf, repf, proff, trf = run(binary, d, "full", args.timeout)
        ra, wa, repa, profa, tra = run(binary, d, "active", args.timeout)
        problems = []
        if rf.returncode != 0 or "PASS" not in rf.stdout:
            problems.append("full run failed (rc %d): %s %s" % (rf.returncode, rf.stdout, rf.stderr[-800:]))
        if ra.returncode != 0 or ra.stdout != rf.stdout:
            problems.append("active run differs (rc %d):\n  full:   %s\n  active: %s\n  %s" % (
                ra.returncode, rf.stdout.strip(), ra.stdout.strip(), ra.stderr[-800:]))
        if proff:
            problems.append("MEMPLACE_PROFILE=full produced active profiles")
        traced = sum(k.get("launches", {}).get("traced", 0) for k in repa.get("kernels", []))
        if len(profa) != traced:
            problems.append("%d traced launches but %d active profiles" % (traced, len(profa)))
        for p in profa:
            if p["threads_run"] > p["threads_total"] * 1 and p["warp_level"] and p["lane_level"]:
                problems.append("%s: ran %d threads of %d with both levels on" % (
                    p["kernel"], p["threads_run"], p["threads_total"]))
        truncating = os.environ.get("MEMPLACE_PROFILE_LOOPS", "0") not in ("", "0")
        if prog in EXACT and not truncating:
            if trf != tra or not trf:
                problems.append("the active traces differ from the full traces (%d vs %d files)" % (len(trf), len(tra)))
        kf = {key(k): k for k in repf.get("kernels", [])}
        for i, ka in enumerate(repa.get("kernels", [])):
            k = kf.get(key(ka), {})
            p = profa[i] if i < len(profa) else {}
            pf, pa = k.get("predicted", {}).get("decision_us"), ka.get("predicted", {}).get("decision_us")
            if pf is None or pa is None:
                pred = "-"
            else:
                delta = (pa - pf) / pf * 100 if pf else 0.0
                pred = "%.2f → %.2f (%+.1f%%)" % (pf, pa, delta)
            levels = ("warp %s, lane %s" % ("on" if p.get("warp_level") else "off (%s)" % p.get("warp_level_off", "").split(" reached ")[-1],
                                             "on" if p.get("lane_level") else "off")) if p else "-"
            lf = k.get("trace", {}).get("lanes", 0)
            rows.append("| %s | %s | %s | %s | %s | %s | %s%s | %s | %.2f / %.2f |" % (
                prog, ka.get("kernel"),
                "%d / %d (%.1f%%)" % (p["threads_run"], p["threads_total"], 100.0 * p["threads_run"] / max(1, p["threads_total"])) if p else "-",
                "%d / %d" % (p.get("lane_accesses_profiled", 0), lf) if p else "-",
                levels, fmt_place(k), fmt_place(ka),
                "" if k.get("decision") == ka.get("decision") else " **(moved)**", pred, wf, wa))
        if problems:
            bad += 1
            print("FAIL %-18s %s" % (prog, "; ".join(problems)))
        else:
            print("ok   %-18s outputs equal; %d active profile(s)%s; %.2f s full, %.2f s active" % (
                prog, len(profa), ", traces identical to full" if prog in EXACT else "", wf, wa))
    table = "\n".join(rows) + "\n"
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
