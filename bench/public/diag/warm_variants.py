#!/usr/bin/env python3
"""Where a memplace build's extra wall time goes (docs/EVALUATION.md, "Exact, interleaved times"):
interleaved runs of the original, the memplace build with MEMPLACE=off, and warm (with and without
MEMPLACE_REPORT), plus LD_DEBUG=statistics. On the GPU machine, out/public/runs carried:
  N=12 python3 bench/public/diag/warm_variants.py RESULTS PROGRAM..."""
import json, os, shutil, statistics, subprocess, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import runs as R
out = Path("out/public/runs"); res = Path(sys.argv[1]); res.mkdir(parents=True, exist_ok=True)
scratch = Path("/tmp/probe"); manifest = json.loads((out / "manifest.json").read_text())
progs = {e["program"]: e for e in manifest["programs"]}
N = int(os.environ.get("N", "12"))
summary = []
for name in sys.argv[2:]:
    entry = progs[name]; inp = entry["inputs"][0]
    argv = R.input_argv(entry, inp, scratch)
    orig = R.unpack(out, scratch, entry, "original"); mine = R.unpack(out, scratch, entry, "memplace")
    cache = scratch / "cache" / name; shutil.rmtree(cache, ignore_errors=True)
    base = R.run_env("original", entry, out)
    # fill the cache
    R.run_once(mine, argv, scratch / "w" / "fill", R.run_env("memplace", entry, out, cache, scratch / "r.json"), 120)
    variants = {
        "original": (orig, base),
        "mp_off": (mine, dict(base, MEMPLACE="off")),
        "mp_warm": (mine, dict(base, MEMPLACE="auto", MEMPLACE_CACHE=str(cache))),
        "mp_warm_report": (mine, dict(base, MEMPLACE="auto", MEMPLACE_CACHE=str(cache), MEMPLACE_REPORT=str(scratch / "r2.json"))),
    }
    walls = {k: [] for k in variants}
    for i in range(N):
        for k, (exe, env) in variants.items():
            walls[k].append(R.run_once(exe, argv, scratch / "w" / k, env, 120)["wall_s"])
    med = {k: statistics.median(v) for k, v in walls.items()}
    line = f"{name}: " + "  ".join(f"{k} {med[k]*1000:.1f} ms (min {min(walls[k])*1000:.1f})" for k in variants)
    print(line, flush=True); summary.append(line)
    for k, (exe, env) in variants.items():
        if shutil.which("strace"):
            r = subprocess.run(["strace", "-f", "-c", "-o", str(res / f"{name}.{k}.strace"), str(exe), *argv],
                               cwd=scratch / "w" / k, env=env, capture_output=True)
        e2 = dict(env, LD_DEBUG="statistics")
        r = subprocess.run([str(exe), *argv], cwd=scratch / "w" / k, env=e2, capture_output=True, text=True)
        (res / f"{name}.{k}.lddebug").write_text(r.stderr[-4000:])
        if shutil.which("ltrace") is None and shutil.which("perf"):
            pass
    json.dump(walls, open(res / f"{name}.walls.json", "w"))
(res / "summary.txt").write_text("\n".join(summary) + "\n")
print("tools:", {t: bool(shutil.which(t)) for t in ("strace", "ltrace", "perf", "nsys", "gdb")})
