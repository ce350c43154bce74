#!/usr/bin/env python3
"""The phases of a whole process (before main, main, exit handlers) for the original, the memplace
build with MEMPLACE=off and warm, through the preload phases.c (compiled here with gcc). On the GPU
machine, out/public/runs carried: N=10 python3 bench/public/diag/phases.py RESULTS PROGRAM..."""
import json, os, shutil, statistics, subprocess, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import runs as R
out = Path("out/public/runs"); res = Path(sys.argv[1]); res.mkdir(parents=True, exist_ok=True)
scratch = Path("/tmp/probe3"); manifest = json.loads((out / "manifest.json").read_text())
progs = {e["program"]: e for e in manifest["programs"]}
shim = scratch / "phases.so"; scratch.mkdir(parents=True, exist_ok=True)
subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(shim), str(Path(__file__).with_name("phases.c")), "-ldl"], check=True)
N = int(os.environ.get("N", "10"))
for name in sys.argv[2:]:
    entry = progs[name]; inp = entry["inputs"][0]
    argv = R.input_argv(entry, inp, scratch)
    orig = R.unpack(out, scratch, entry, "original"); mine = R.unpack(out, scratch, entry, "memplace")
    cache = scratch / "cache" / name; shutil.rmtree(cache, ignore_errors=True)
    def env(base, tag):
        e = dict(base); pre = [str(shim)] + ([e["LD_PRELOAD"]] if e.get("LD_PRELOAD") else [])
        e["LD_PRELOAD"] = ":".join(pre); e["PHASES_OUT"] = str(res / f"{name}.{tag}.txt"); return e
    R.run_once(mine, argv, scratch / "w" / "fill", R.run_env("memplace", entry, out, cache, scratch / "r.json"), 120)
    variants = {"original": (orig, env(R.run_env("original", entry, out), "original")),
                "off": (mine, env(dict(R.run_env("original", entry, out), MEMPLACE="off"), "off")),
                "warm": (mine, env(dict(R.run_env("original", entry, out), MEMPLACE="auto", MEMPLACE_CACHE=str(cache)), "warm"))}
    walls = {k: [] for k in variants}
    for i in range(N):
        for k, (exe, e) in variants.items():
            walls[k].append(R.run_once(exe, argv, scratch / "w" / k, e, 120)["wall_s"] * 1000)
    line = [name]
    for k in variants:
        rows = [list(map(float, l.split())) for l in open(res / f"{name}.{k}.txt")]
        cols = [statistics.median(c) for c in zip(*rows)]
        line.append(f"{k}: wall {statistics.median(walls[k]):.1f} pre-main {cols[0]:.1f} main {cols[1]:.1f} exit {cols[2]:.1f}")
    print(" | ".join(line), flush=True)
