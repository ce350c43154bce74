#!/usr/bin/env python3
"""How much of public CUDA programs memplace reaches: kernels defined, found, rewritten.

Runs `memplace rewrite --json` on every translation unit of the programs listed in
bench/public/programs.json (Rodinia's CUDA programs; their code is never committed: fetch it,
see docs/EVALUATION.md "Public programs") and compares what it reports with the kernels the
translation unit defines (every `__global__` definition in the file and the files it includes
with quotes, found by a scan of the text). Prints a table and writes the reports under --out.

  bench/public/coverage.py --suite rodinia=DIR [--memplace build/bin/memplace] [--out DIR]
                           [--nvcc [PATH]]

With --nvcc, each translation unit is compiled with nvcc -arch=sm_90 as ported (does nvcc build
it?) and as rewritten (does the rewritten code compile?); no GPU is needed.

DIR is the folder holding the suite's programs (for Rodinia: the `cuda/` folder of
github.com/yuhc/gpu-rodinia). The sources are copied into --out and ported there (only what CUDA
13 removed, listed in programs.json under "ports"); the copy is what memplace reads.
"""

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNEL_DEF = re.compile(r"__global__\s+(?:static\s+)?(?:__launch_bounds__\s*\([^)]*\)\s*)?"
                        r"void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(")
QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def defined_kernels(root, seen=None):
    """Kernel names defined in `root` and the files it includes with quotes (recursively)."""
    seen = set() if seen is None else seen
    root = root.resolve()
    if root in seen or not root.is_file():
        return set()
    seen.add(root)
    text = strip_comments(root.read_text(errors="replace"))
    names = set(KERNEL_DEF.findall(text))
    for inc in QUOTED_INCLUDE.findall(text):
        names |= defined_kernels(root.parent / inc, seen)
    return names


def apply_ports(folder, ports):
    """Applies the textual ports to every source file under folder: what CUDA 13 removed, and
    dwt2d's fixed image folder (it reads ../../data/dwt2d/NAME; runs.py gives it a path)."""
    changed = []
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".cu", ".cuh", ".h", ".c", ".cpp") or not path.is_file():
            continue
        text = path.read_text(errors="surrogateescape")
        new = text
        for port in ports:
            new = re.sub(port["pattern"], port["replacement"], new)
        if new != text:
            path.write_text(new, errors="surrogateescape")
            changed.append(str(path.relative_to(folder)))
    return changed


def ported_copy(folder, dest, ports):
    """A fresh copy of the suite's folder at dest with the ports applied: the files changed."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(folder, dest)
    return apply_ports(dest, ports)


def rewrite_unit(memplace, src, out, args, timeout):
    cmd = [memplace, "rewrite", "--json", "--force", "-o", str(out), str(src)]
    if args:
        cmd += ["--"] + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    try:
        return json.loads(p.stdout), p.stderr
    except json.JSONDecodeError:
        lines = [l for l in p.stderr.splitlines() if "error" in l]
        return None, (lines[0] if lines else f"exit {p.returncode}")


def nvcc_compiles(nvcc, src, includes, args, log, extra=()):
    """Whether nvcc compiles src to an object (-c); its messages go to log."""
    cmd = [nvcc, "-c", "-arch=sm_90", "-w", *extra, "-o", "/dev/null", str(src)]
    cmd += [f"-I{i}" for i in includes] + [a for a in args if a.startswith(("-I", "-D"))]
    p = subprocess.run(cmd, capture_output=True, text=True)
    log.write_text(" ".join(cmd) + "\n" + p.stdout + p.stderr)
    return p.returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", action="append", required=True, help="NAME=DIR")
    ap.add_argument("--memplace", default="build/bin/memplace")
    ap.add_argument("--out", default="out/public/coverage")
    ap.add_argument("--programs", nargs="*", help="only these programs")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--nvcc", nargs="?", const=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc",
                    help="compile each unit as ported and as rewritten with this nvcc")
    opts = ap.parse_args()

    table = json.loads((HERE / "programs.json").read_text())
    out = Path(opts.out).resolve()
    rows, totals = [], [0, 0, 0]
    for spec in opts.suite:
        name, _, folder = spec.partition("=")
        suite = table[name]
        src_copy = out / name / "src"
        ported = ported_copy(folder, src_copy, suite["ports"])
        print(f"{name}: ported {len(ported)} files ({', '.join(p['why'] for p in suite['ports'])})")
        for prog, units in suite["programs"].items():
            if opts.programs and prog not in opts.programs:
                continue
            for unit in units:
                src = src_copy / unit["file"]
                expected = defined_kernels(src)
                report, err = rewrite_unit(opts.memplace, src, out / name / "rewritten" / prog,
                                           [a.replace("{src}", str(src_copy))
                                            for a in unit.get("args", [])], opts.timeout)
                found = rewritten = 0
                note = ""
                if report is None:
                    note = err.strip()[:100]
                else:
                    kernels = report["kernels"]
                    found = len({k["name"] for k in kernels})
                    rewritten = len({k["name"] for k in kernels if k.get("rewritten")})
                    left = sorted({f'{k["name"]}: {k.get("reason", "")}'
                                   for k in kernels if not k.get("rewritten")})
                    note = "; ".join(left)[:160]
                    (out / name / "reports").mkdir(parents=True, exist_ok=True)
                    (out / name / "reports" / (unit["file"].replace("/", "__") + ".json")
                     ).write_text(json.dumps(report, indent=1))
                built = ""
                if opts.nvcc:
                    logs = out / name / "nvcc"
                    logs.mkdir(parents=True, exist_ok=True)
                    stem = unit["file"].replace("/", "__")
                    args = [a.replace("{src}", str(src_copy)) for a in unit.get("args", [])]
                    built = "orig:" + ("ok" if nvcc_compiles(
                        opts.nvcc, src, [src.parent], args, logs / f"{stem}.orig.log") else "FAIL")
                    rewritten_src = out / name / "rewritten" / prog / src.name
                    if report is not None and rewritten_src.is_file():
                        root = HERE.parent.parent
                        ok = nvcc_compiles(opts.nvcc, rewritten_src,
                                           [rewritten_src.parent, src.parent, root,
                                            root / "runtime" / "include"],
                                           args, logs / f"{stem}.rewritten.log",
                                           ["-std=c++20"])  # memplace's headers need C++20
                        built += " rw:" + ("ok" if ok else "FAIL")
                rows.append((f"{name}/{prog}", unit["file"], len(expected), found, rewritten,
                             built, note))
                totals[0] += len(expected)
                totals[1] += found
                totals[2] += rewritten
    print(f"\n{'program':24} {'unit':44} {'defined':>7} {'found':>5} {'rewritten':>9} "
          f"{'nvcc':14} note")
    for r in rows:
        print(f"{r[0]:24} {r[1]:44} {r[2]:7} {r[3]:5} {r[4]:9} {r[5]:14} {r[6]}")
    print(f"{'total':69} {totals[0]:7} {totals[1]:5} {totals[2]:9}")
    (out / "coverage.json").write_text(json.dumps(
        [dict(zip(("program", "unit", "defined", "found", "rewritten", "nvcc", "note"), r))
         for r in rows],
        indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
