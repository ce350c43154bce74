#!/usr/bin/env python3
"""Public programs on the GPU, as written and under memplace: outputs bitwise, whole-process times.

Two steps, and a shortcut between them (issue 29's judged measurement; docs/EVALUATION.md
"Public programs"):

  runs.py prepare --suite rodinia=DIR --carry OUT [--work DIR] [--build build] [--nvcc PATH]
                  [--programs P ...]
      here (clang, nvcc, the CMake build): copies and ports the suite (as coverage.py does),
      rewrites each program's units with `memplace rewrite`, builds with nvcc -arch=sm_90 the
      original and the memplace build (the rewritten units with -std=c++20, linked with the
      Placer and the engine from BUILD/lib) and writes into OUT the stripped binaries, a preload
      that fixes time() (programs that seed rand() with it), this script and manifest.json
      (program, argv per input, output files, stdout lines that hold times, build failures).

  runs.py refresh --carry OUT
      here: OUT's manifest takes programs.json's inputs, outputs, timing lines and fixed_time
      as they are now, without rebuilding (a change that leaves the sources and flags alone).

  runs.py run OUT RESULTS [--dry-run] [--programs P ...] [--reps N] [--cold N] [--warm N]
      on the GPU machine (python3 and the stdlib only): per program and input, the memplace
      build with MEMPLACE=auto, --cold times with an empty MEMPLACE_CACHE (the first run;
      default 3) and --warm more times on the cache the last one wrote (default 8), each with
      MEMPLACE_REPORT and each right after a run of the original (at least --reps of those,
      default 9). Whole-process wall times, exact (the run is awaited, not polled): medians,
      min and max; ratios are medians of each memplace run over the original's run before it,
      beside the run-to-run change of the originals (the resolution). Every run's outputs (its
      output files, its stdout without the timing lines) are compared bitwise with the
      original's run before it. Writes RESULTS/runs.json (with the cold run's
      per-kernel first-run overheads from its report), RESULTS/reports.tgz (every run's Placer
      report) and RESULTS/summary.md, and prints the table. MEMPLACE_RUNS_BUDGET_S (default 420)
      bounds the whole run: every program's first input runs before any second one, and what
      does not fit is skipped and listed. --dry-run checks the manifest and the binaries and
      prints the plan.

The program list, flags, inputs and outputs are bench/public/programs.json's "runs".
"""

import argparse
import gzip
import hashlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
LIBS = ["memplace_placer", "memplace_runtime", "memplace_runtime_core", "memplace_search",
        "memplace_model", "memplace_trace", "memplace_spec", "memplace_common"]
LINK = ["-arch=sm_90", "-Xcompiler=-static-libstdc++,-static-libgcc", "-lpthread"]
PLACER_LINK = ["-Xlinker", "--undefined=memplace_placer_autoinstall"]
FIXED_TIME_C = "#include <time.h>\ntime_t time(time_t* t) { if (t) *t = 1; return 1; }\n"
BUDGET_ENV = "MEMPLACE_RUNS_BUDGET_S"


# ---------------------------------------------------------------- pure parts (tested) -------

def drop_timing_lines(text, patterns):
    """stdout without the lines any of the regular expressions matches (the program's times)."""
    regexes = [re.compile(p) for p in patterns]
    return "".join(line for line in text.splitlines(keepends=True)
                   if not any(r.search(line) for r in regexes))


def digest(data):
    return hashlib.sha256(data).hexdigest()[:16]


def observed_outputs(folder, outputs, drop):
    """What a run shows: {name: digest} of its output files and its filtered stdout."""
    folder = Path(folder)
    seen = {}
    stdout = (folder / "stdout.txt").read_bytes().decode("utf-8", "surrogateescape")
    seen["stdout"] = digest(drop_timing_lines(stdout, drop).encode("utf-8", "surrogateescape"))
    for name in outputs:
        path = folder / name
        seen[name] = digest(path.read_bytes()) if path.is_file() else "missing"
    return seen


def differing(reference, other):
    """The names whose outputs differ between two observed_outputs results."""
    return sorted(k for k in set(reference) | set(other) if reference.get(k) != other.get(k))


def kernel_decisions(report):
    """One line per kernel of a Placer report: its statuses and the non-global places applied."""
    per_kernel = {}
    for k in (report or {}).get("kernels", []):
        entry = per_kernel.setdefault(k.get("kernel", "?"), {"status": [], "placed": set()})
        if k.get("status") not in entry["status"]:
            entry["status"].append(k.get("status"))
        for array, place in (k.get("applied") or {}).items():
            if place != "global":
                entry["placed"].add(f"{array}:{place}")
    return {name: "/".join(str(s) for s in e["status"]) +
            (" " + ",".join(sorted(e["placed"])) if e["placed"] else "")
            for name, e in per_kernel.items()}


def kernel_overheads(report):
    """Per kernel signature of a Placer report, what its first run cost: overhead_ms (total,
    profiling, engine, transform, tuning), the original's median host time a launch, the launches
    traced of all, the status and why (the cold run's entry in runs.json)."""
    rows = []
    for k in (report or {}).get("kernels", []):
        overhead = k.get("overhead_ms") or {}
        launches = k.get("launches") or {}
        rows.append({
            "kernel": k.get("kernel", "?"),
            "signature": (k.get("signature") or {}).get("text"),
            "status": k.get("status"), "why": k.get("why") or "",
            "launches_traced": launches.get("traced"), "launches_total": launches.get("total"),
            "overhead_ms": {f: overhead.get(f) for f in
                            ("total", "profiling", "engine", "transform", "tuning")},
            "host_us_median_original": (overhead.get("detail") or {}).get(
                "host_us_median_original")})
    return rows


def spread(values):
    """Median, min and max of wall times (the machine quantises them: see docs/EVALUATION.md)."""
    values = list(values)
    return {"median": round(statistics.median(values), 4), "min": min(values),
            "max": max(values)}


def memplace_messages(stderr_text, report):
    """The warnings memplace gave (races, fallbacks): its stderr lines and the report's."""
    lines = [re.sub(r"^memplace( placer)?: ", "", l.strip())
             for l in stderr_text.splitlines() if "memplace" in l.lower()]
    lines += [re.sub(r"^memplace( placer)?: ", "", w) for w in (report or {}).get("warnings", [])]
    for k in (report or {}).get("kernels", []):
        why = str(k.get("why") or "")
        if k.get("status") == "original" and why:
            lines.append(f"{k.get('kernel')}: original: {why}")
    unique = list(dict.fromkeys(lines))
    return unique[:20]


def first_difference(original, other, names, drop, label):
    """Where the first differing output first differs: its name, line and both lines."""
    for name in names:
        a, b = original / name, other / name
        if name == "stdout":
            a, b = original / "stdout.txt", other / "stdout.txt"
        if not (a.is_file() and b.is_file()):
            return {"run": label, "output": name, "why": "missing"}
        left = a.read_bytes().decode("utf-8", "surrogateescape")
        right = b.read_bytes().decode("utf-8", "surrogateescape")
        if name == "stdout":
            left, right = drop_timing_lines(left, drop), drop_timing_lines(right, drop)
        la, lb = left.splitlines(), right.splitlines()
        for i in range(max(len(la), len(lb))):
            x = la[i] if i < len(la) else None
            y = lb[i] if i < len(lb) else None
            if x != y:
                return {"run": label, "output": name, "line": i + 1,
                        "original": None if x is None else x[:200],
                        "memplace": None if y is None else y[:200]}
    return None


def seconds_with_range(row, key):
    """'median (min-max)' of row[key + '_s'], three decimals; '-' when not measured."""
    median = row.get(f"{key}_s")
    if median is None:
        return "-"
    low, high = row.get(f"{key}_min_s"), row.get(f"{key}_max_s")
    return f"{median:.3f}" + ("" if low is None else f" ({low:.3f}-{high:.3f})")


def markdown_table(results):
    head = ("| program | input | original s median (min-max) | run to run | cold s | cold ratio "
            "| warm s median (min-max) | warm ratio | bitwise | decisions (cold -> warm) |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    rows = []
    for r in results:
        bitwise = {True: "yes", False: "no: " + ", ".join(r.get("differs", []))}.get(
            r.get("bitwise"), "-")
        if r.get("bitwise") and not r.get("original_deterministic", True):
            bitwise += " (original varies)"
        if r.get("original_failed"):
            bitwise += f" (the original fails: {r['original_failed']})"
        rows.append(f"| {r['program']} | {r['input']} | {seconds_with_range(r, 'original')} "
                    f"| {r.get('noise') if r.get('noise') is not None else '-'} "
                    f"| {seconds_with_range(r, 'cold')} | {r.get('cold_ratio') or '-'} "
                    f"| {seconds_with_range(r, 'warm')} "
                    f"| {r.get('warm_ratio') or '-'} | {bitwise} "
                    f"| {'; '.join(f'{k}: {v}' for k, v in r.get('decisions', {}).items()) or '-'} |")
    return head + "\n".join(rows) + "\n"


def plan_order(manifest, programs=None):
    """(program, input) pairs, every program's first input before any program's second, so a
    budget that runs out loses the large inputs rather than whole programs."""
    entries = [p for p in manifest["programs"] if not programs or p["program"] in programs]
    depth = max((len(p["inputs"]) for p in entries), default=0)
    return [(p, p["inputs"][i]) for i in range(depth) for p in entries if i < len(p["inputs"])]


# ---------------------------------------------------------------- input generators ----------

def generate_hotspot(folder, size, seed=29):
    """hotspot's temp and power files: one value a line, size*size lines (its readinput)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    n = size * size
    (folder / "temp").write_text("".join(f"{320 + 20 * rng.random():.6f}\n" for _ in range(n)))
    (folder / "power").write_text("".join(f"{0.001 * rng.random():.8f}\n" for _ in range(n)))


def generate_bfs(folder, nodes, degree, seed=29):
    """bfs's graph file: node count, (first edge, edge count) per node, source, edge count,
    (destination, cost) per edge; random edges of `degree` per node on average."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    counts = rng.choices(range(1, 2 * degree), k=nodes)
    out = [f"{nodes}\n"]
    start = 0
    for c in counts:
        out.append(f"{start} {c}\n")
        start += c
    out.append(f"\n0\n\n{start}\n")
    ends = rng.choices(range(nodes), k=start)  # choices: fast enough for 6M edges
    costs = rng.choices(range(1, 11), k=start)
    out.extend(f"{e} {c}\n" for e, c in zip(ends, costs))
    (folder / "graph.txt").write_text("".join(out))


HURRICANE_NAMES = ["ALBERTO", "BERYL", "CHRIS", "DEBBY", "ERNESTO", "FLORENCE", "GORDON",
                   "HELENE", "ISAAC", "JOYCE", "KIRK", "LESLIE", "MICHAEL", "NADINE", "OSCAR",
                   "PATTY", "RAFAEL", "SANDY", "TONY", "VALERIE", "WILLIAM"]
NN_DBNAME_MAX = 63  # nn's loadData reads each listed name with fscanf("%s") into char[64]
NN_LIST_MAX = 99  # and strncpy's its first argument, the list's name, into char[100]


def generate_nn(folder, records, files, seed=29):
    """nn's inputs: `files` record files of hurricane_gen's 48-character lines (year, month,
    day, hour, number, name, latitude at column 28, longitude at 33, speed, pressure) and
    list.txt naming them. The names are absolute (nn opens them from its working folder), and
    nn reads each into char[64]: a longer name is refused here rather than overflow there
    (the default scratch folder, /tmp/memplace-runs-XXXXXXXX, leaves 12 characters spare)."""
    rng = random.Random(seed)
    folder = Path(folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    names = [folder / f"c{j}.db" for j in range(files)]
    too_long = [str(n) for n in names if len(str(n)) > NN_DBNAME_MAX or " " in str(n)]
    if too_long or len(str(folder / "list.txt")) > NN_LIST_MAX:
        raise ValueError(f"nn inputs under {folder}: a name over {NN_DBNAME_MAX} characters "
                         f"(list.txt's: {NN_LIST_MAX}) or with a space (nn reads them into "
                         "char[64] with %s, and its argument into char[100]): use a shorter "
                         "--scratch")
    # hurricane_gen's fields as it prints them ("%4d %2d %2d %2d %2d %-9s %5.1f %5.1f %4d %4d"),
    # each column drawn from its printed values (a million records in about a second):
    # latitudes 7.0-69.9 and longitudes 0.0-357.9 in tenths of a degree.
    columns = [[f"{v:4d} " for v in range(1950, 2005)], [f"{v:2d} " for v in range(1, 13)],
               [f"{v:2d} " for v in range(1, 29)], [f"{v:2d} " for v in (0, 6, 12, 18)],
               [f"{v:2d} " for v in range(1, 29)], [f"{v:<9s} " for v in HURRICANE_NAMES],
               [f"{v / 10:5.1f} " for v in range(70, 700)],
               [f"{v / 10:5.1f} " for v in range(3580)],
               [f"{v:4d} " for v in range(10, 165)], [f"{v:4d}\n" for v in range(900)]]
    for j, name in enumerate(names):
        n = records // files + (j < records % files)
        drawn = [rng.choices(values, k=n) for values in columns]
        name.write_text("".join(map("".join, zip(*drawn))))
    (folder / "list.txt").write_text("".join(f"{n}\n" for n in names))


def generate_btree(folder, keys, range_queries, key_queries, seed=29):
    """b+tree's inputs: input.txt (the key count, then the odd numbers below 2*keys in a random
    order, one a line; its queries draw keys of [0, keys]: half miss) and command.txt: a range-query
    command `j` and a key-query command `k`, then a NUL. b+tree reads `j N M` as count N and
    range size N (its pointer stays on the space before M), so M is written as N; it reads the
    command file into a buffer of the file's size and walks it as a C string, so the NUL ends
    it (past the buffer, a stray letter would be a command that reads stdin)."""
    if key_queries > 65535:
        raise ValueError("b+tree: k takes at most 65535 queries (one block each)")
    if range_queries > keys:
        raise ValueError("b+tree: j's range size (its count) must be at most the key count")
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    values = list(range(1, 2 * keys, 2))
    rng.shuffle(values)
    (folder / "input.txt").write_text(f"{keys}\n" + "\n".join(map(str, values)) + "\n")
    (folder / "command.txt").write_bytes(
        f"j {range_queries} {range_queries}\nk {key_queries}\n\0".encode())


def generate_dwt2d(folder, width, height, seed=29):
    """dwt2d's image.bmp: a 24-bit BMP (a 54-byte header, rows bottom-up, each padded to 4
    bytes) of a colour gradient with noise. dwt2d reads the file's first width*height*3 bytes
    as the RGB samples, header included: the file is that long or longer."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    row_bytes = (3 * width + 3) // 4 * 4
    # Without a loop over bytes: a row of x gradients (0-111) shifted by the row's y gradient
    # (0-111, bytes.translate) plus noise (0-31) as one big-integer sum, carry-free (<= 254).
    step = 111 / max(width - 1, 1)
    xs = bytes(v for x in range(width)
               for v in (round(x * step), 111 - round(x * step), (x * 37) % 112))
    low5 = bytes(i & 31 for i in range(256))
    pixels = bytearray()
    for y in range(height):
        shift = round(y * 111 / max(height - 1, 1))
        base = xs.translate(bytes((i + shift) & 255 for i in range(256)))
        noise = rng.randbytes(3 * width).translate(low5)
        row = int.from_bytes(base, "little") + int.from_bytes(noise, "little")
        pixels += row.to_bytes(3 * width, "little") + bytes(row_bytes - 3 * width)
    header = b"BM" + (54 + len(pixels)).to_bytes(4, "little") + bytes(4) + \
        (54).to_bytes(4, "little") + (40).to_bytes(4, "little") + \
        width.to_bytes(4, "little") + height.to_bytes(4, "little") + \
        (1).to_bytes(2, "little") + (24).to_bytes(2, "little") + bytes(4) + \
        len(pixels).to_bytes(4, "little") + (2835).to_bytes(4, "little") * 2 + bytes(8)
    (folder / "image.bmp").write_bytes(header + pixels)


GENERATORS = {
    "hotspot": lambda folder, g: generate_hotspot(folder, g["size"]),
    "bfs": lambda folder, g: generate_bfs(folder, g["nodes"], g["degree"]),
    "nn": lambda folder, g: generate_nn(folder, g["records"], g["files"]),
    "b+tree": lambda folder, g: generate_btree(folder, g["keys"], g["range_queries"],
                                               g["key_queries"]),
    "dwt2d": lambda folder, g: generate_dwt2d(folder, g["width"], g["height"]),
}


# ---------------------------------------------------------------- prepare (here) ------------

def sh(cmd, log, cwd=None):
    """Runs cmd; its messages go to log; the first error line (or the exit status) on failure."""
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    log.write_text(" ".join(map(str, cmd)) + "\n" + p.stdout + p.stderr)
    if p.returncode == 0:
        return None
    errors = [l for l in (p.stdout + p.stderr).splitlines() if "error" in l.lower()]
    return (errors[0] if errors else f"exit {p.returncode}").strip()[:200]


def rewrite_program(coverage, memplace, src_copy, units, rewritten, logs):
    """memplace rewrite of the program's units: {unit file: rewritten path}, reports, failures."""
    done, summary, failures = {}, [], []
    for unit in units:
        src = src_copy / unit["file"]
        args = [a.replace("{src}", str(src_copy)) for a in unit.get("args", [])]
        # A folder per unit: units that include one header rewrite it each their own way (only
        # the helpers that unit uses, its own site numbers: dwt2d's io.h).
        out = rewritten / unit["file"].replace("/", "__")
        out.mkdir(parents=True, exist_ok=True)
        report, err = coverage.rewrite_unit(memplace, src, out, args, 600)
        (logs / (unit["file"].replace("/", "__") + ".rewrite.log")).write_text(str(err))
        if report is None:
            failures.append({"stage": "rewrite", "unit": unit["file"], "why": str(err)[:200]})
            continue
        done[unit["file"]] = out / src.name
        summary.append({"unit": unit["file"], "kernels": [
            {"name": k["name"], "rewritten": bool(k.get("rewritten")),
             **({"reason": k["reason"]} if k.get("reason") else {})}
            for k in report["kernels"]]})
    return done, summary, failures


def compile_jobs(spec, src_copy, rewritten_units, objs):
    """(variant, source, command) for every object: each source as written, and each rewritten
    unit again from its rewritten copy (the other sources' objects are shared)."""
    flags = [f.replace("{src}", str(src_copy)) for f in spec["flags"]]
    jobs = []
    for i, rel in enumerate(spec["sources"]):
        src = src_copy / rel
        base = ["-c", "-arch=sm_90", "-w", *flags, f"-I{src.parent}"]
        jobs.append(("original", i, base + ["-o", str(objs / f"{i}.original.o"), str(src)]))
        if rel in rewritten_units:
            jobs.append(("memplace", i, base[:3] + ["-std=c++20", *flags,
                                                    f"-I{rewritten_units[rel].parent}",
                                                    f"-I{src.parent}", f"-I{ROOT}",
                                                    f"-I{ROOT / 'runtime' / 'include'}",
                                                    "-o", str(objs / f"{i}.memplace.o"),
                                                    str(rewritten_units[rel])]))
    return jobs


def run_fields(spec):
    """What `run` takes from programs.json (the rest of a manifest entry is the build's)."""
    return {"inputs": spec["inputs"], "outputs": spec["outputs"], "drop": spec["drop"],
            "observes": spec.get("observes", ""), "fixed_time": bool(spec.get("fixed_time"))}


def refresh(opts):
    """The carried manifest's inputs, outputs, timing lines and fixed_time from programs.json
    as it is now, without rebuilding: for changes that leave the sources and flags alone."""
    carry = Path(opts.carry).resolve()
    table = json.loads((HERE / "programs.json").read_text())
    manifest = json.loads((carry / "manifest.json").read_text())
    for entry in manifest["programs"]:
        spec = table.get(entry.get("suite"), {}).get("runs", {}).get(entry["program"])
        if spec is None:
            sys.exit(f"runs.py: {entry['program']}: not in programs.json's runs: prepare again")
        if spec.get("fixed_time") and not (carry / "fixed_time.so").is_file():
            sys.exit(f"runs.py: {entry['program']}: fixed_time needs a prepare")
        changed = [k for k, v in run_fields(spec).items() if entry.get(k) != v]
        entry.update(run_fields(spec))
        print(f"{entry['program']}: {', '.join(changed) or 'unchanged'}")
    (carry / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    shutil.copy(__file__, carry / "runs.py")
    return 0


def build_program(name, spec, suite, ctx):
    """Both binaries of one program into ctx['carry']/bin: the manifest entry."""
    work = ctx["work"] / name
    logs, objs, rewritten = work / "logs", work / "obj", work / "rewritten"
    for d in (logs, objs, rewritten):
        shutil.rmtree(d, ignore_errors=True)
    logs.mkdir(parents=True)
    objs.mkdir()
    units = suite["programs"].get(name, [])
    rewritten_units, summary, failures = rewrite_program(
        ctx["coverage"], ctx["memplace"], ctx["src"], units, rewritten, logs)
    jobs = compile_jobs(spec, ctx["src"], rewritten_units, objs)
    with ThreadPoolExecutor(max_workers=ctx["jobs"]) as pool:
        errs = list(pool.map(lambda j: sh([ctx["nvcc"], *j[2]], logs / f"{j[1]}.{j[0]}.log"),
                             jobs))
    for (variant, i, _), err in zip(jobs, errs):
        if err:
            failures.append({"stage": f"compile {variant}", "unit": spec["sources"][i], "why": err})
    entry = {"program": name, **run_fields(spec), "rewrite": summary,
             "original": None, "memplace": None, "failures": failures}
    bin_dir = ctx["carry"] / "bin"
    for variant in ("original", "memplace"):
        # The memplace build needs every unit rewritten and both builds' objects.
        blockers = {"original": {"compile original"},
                    "memplace": {"compile original", "compile memplace", "rewrite"}}[variant]
        if any(f["stage"] in blockers for f in failures):
            continue
        objects = [str(objs / f"{i}.{variant}.o") if (objs / f"{i}.{variant}.o").is_file()
                   else str(objs / f"{i}.original.o") for i in range(len(spec["sources"]))]
        exe = work / f"{name}.{variant}"
        extra = ctx["libs"] + PLACER_LINK if variant == "memplace" else []
        err = sh([ctx["nvcc"], *LINK, *objects, *extra, "-o", str(exe)], logs / f"link.{variant}.log")
        if err:
            failures.append({"stage": f"link {variant}", "why": err})
            continue
        # Carried compressed and without symbols: 10 programs' binaries stay near 20 MB.
        subprocess.run(["strip", "--strip-all", str(exe)], check=True)
        with open(exe, "rb") as src, gzip.open(bin_dir / f"{exe.name}.gz", "wb", 9) as dst:
            shutil.copyfileobj(src, dst)
        entry[variant] = f"bin/{exe.name}.gz"
    return entry


def prepare(opts):
    sys.path.insert(0, str(HERE))
    import coverage  # noqa: E402  (the suite copy, the ports, the rewrite call)

    table = json.loads((HERE / "programs.json").read_text())
    carry, work = Path(opts.carry).resolve(), Path(opts.work).resolve()
    lib = Path(opts.build).resolve() / "lib"
    libs = [str(lib / f"lib{l}.a") for l in LIBS]
    missing = [l for l in libs if not Path(l).is_file()]
    if missing:
        sys.exit(f"runs.py: {missing[0]} missing (cmake --build {opts.build} --target "
                 f"{' '.join(LIBS)})")
    shutil.rmtree(carry, ignore_errors=True)
    (carry / "bin").mkdir(parents=True)
    build_fixed_time(carry, work)
    shutil.copy(__file__, carry / "runs.py")
    manifest = {"format": "memplace-public-runs", "version": 1, "programs": [], "suites": {}}
    for spec_arg in opts.suite:
        name, _, folder = spec_arg.partition("=")
        suite, src = table[name], work / name / "src"
        coverage.ported_copy(folder, src, suite["ports"])
        manifest["suites"][name] = suite["source"]
        ctx = {"work": work / name, "src": src, "carry": carry, "coverage": coverage,
               "memplace": opts.memplace, "nvcc": opts.nvcc, "libs": libs, "jobs": opts.jobs}
        for prog, spec in suite["runs"].items():
            if opts.programs and prog not in opts.programs:
                continue
            started = time.monotonic()
            entry = build_program(prog, spec, suite, ctx)
            entry["suite"] = name
            manifest["programs"].append(entry)
            state = "; ".join(f"{f['stage']}: {f['why']}" for f in entry["failures"]) or "ok"
            print(f"{name}/{prog}: {state} ({time.monotonic() - started:.0f} s)", flush=True)
    (carry / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    size = sum(f.stat().st_size for f in carry.rglob("*") if f.is_file())
    print(f"runs.py: {carry} ({size / 2**20:.1f} MiB)")
    return 0


def build_fixed_time(carry, work):
    """A preload whose time() returns 1: the same rand() seed for the original and memplace."""
    work.mkdir(parents=True, exist_ok=True)
    source = work / "fixed_time.c"
    source.write_text(FIXED_TIME_C)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(carry / "fixed_time.so"),
                    str(source)], check=True)


# ---------------------------------------------------------------- run (on the GPU) ----------

class Budget:
    """The time left of MEMPLACE_RUNS_BUDGET_S, so that the run ends inside the device call."""

    def __init__(self, seconds):
        self.seconds, self.start = seconds, time.monotonic()

    def left(self):
        return self.seconds - (time.monotonic() - self.start)


def unpack(out, scratch, entry, variant):
    """The binary, decompressed into SCRATCH/bin once (the decision cache knows a binary by its
    path, size and modification time: every run must use the same file)."""
    packed = out / entry[variant]
    exe = scratch / "bin" / packed.name.removesuffix(".gz")
    if not exe.is_file():
        exe.parent.mkdir(parents=True, exist_ok=True)
        partial = exe.parent / (exe.name + ".partial")
        with gzip.open(packed, "rb") as src, open(partial, "wb") as dst:
            shutil.copyfileobj(src, dst)
        partial.chmod(0o755)
        partial.rename(exe)
    return exe


def run_env(variant, entry, out, cache=None, report=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMPLACE")}
    if entry.get("fixed_time"):
        env["LD_PRELOAD"] = str(out / "fixed_time.so")
    if variant == "memplace":
        env.update(MEMPLACE="auto", MEMPLACE_CACHE=str(cache), MEMPLACE_REPORT=str(report))
    return env


def run_once(exe, argv, folder, env, timeout):
    """One whole process in a fresh folder (its output files land there): wall s, status."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    with open(folder / "stdout.txt", "wb") as out, open(folder / "stderr.txt", "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen([str(exe), *argv], cwd=folder, env=env, stdout=out, stderr=err)
        # A timer kills it at the limit: Popen.wait(timeout) polls with sleeps of up to 50 ms,
        # which quantised every wall time to 50 ms; a plain wait() returns when it exits.
        timer = threading.Timer(max(timeout, 1), proc.kill)
        timer.start()
        rc = proc.wait()
        wall = time.perf_counter() - start
        killed = not timer.is_alive()
        timer.cancel()
    return {"wall_s": round(wall, 5), "rc": "timeout" if killed and rc < 0 else rc}


def read_report(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def input_argv(entry, inp, scratch):
    """The input's command line, its files generated under SCRATCH/inputs once."""
    inputs = scratch / "inputs" / f"{entry['program']}-{inp['name']}"
    if inp.get("generate") and not (inputs / "done").is_file():
        GENERATORS[inp["generate"]["kind"]](inputs, inp["generate"])
        (inputs / "done").write_text("")
    return [a.replace("{inputs}", str(inputs)) for a in inp["argv"]]


def interleaved_plan(opts, memplace):
    """(variant, label) in run order: an original first, then every memplace run right after an
    original of its own, so that the machine's drift (clocks, the page cache, other tenants)
    moves both alike; the originals left over from --reps come last."""
    mine = [("memplace", f"cold{i + 1}" if i else "cold") for i in range(opts.cold)] if memplace \
        else []
    mine += [("memplace", f"warm{i + 1}") for i in range(opts.warm)] if memplace else []
    plan = []
    for m in mine:
        plan += [("original", "original"), m]
    return plan + [("original", "original")] * max(opts.reps - len(mine), 0)


def measure(entry, inp, out, scratch, budget, opts):
    """The original reps times, then memplace cold and warm: one result row. The runs' folders
    are in scratch (outputs can be large); their reports are copied to SCRATCH/reports (packed
    into RESULTS/reports.tgz by pack_reports)."""
    row = {"program": entry["program"], "input": inp["name"], "observes": entry["observes"]}
    argv = input_argv(entry, inp, scratch)
    work = scratch / "work" / entry["program"] / inp["name"]
    reports = scratch / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    runs = row["runs"] = []
    plan = interleaved_plan(opts, bool(entry.get("memplace")))
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    for variant, i in plan:
        slowest = max((r["wall_s"] for r in runs), default=0)
        if budget.left() < 2 * slowest + 2:
            row["skipped"] = f"budget: {len(runs)} of {len(plan)} runs done"
            break
        label = i
        if label.startswith("cold"):
            shutil.rmtree(cache, ignore_errors=True)  # every cold run starts without a cache
        folder = work / (label if variant == "memplace" else "original")
        report = work / f"report.{label}.json"
        env = run_env(variant, entry, out, cache, report)
        exe = unpack(out, scratch, entry, variant)
        # A memplace run that hangs must not take the others' time: 20x the original at most.
        limit = 120 if variant == "original" else max(30, 20 * slowest)
        r = run_once(exe, argv, folder, env, min(budget.left(), limit))
        r.update(variant=variant, label=label, seen=observed_outputs(
            folder, entry["outputs"], entry["drop"]))
        if variant == "memplace":
            rep = read_report(report)
            if report.is_file():
                shutil.copy(report, reports / f"{entry['program']}-{inp['name']}.{label}.json")
            stderr = (folder / "stderr.txt").read_text(errors="replace")
            r.update(decisions=kernel_decisions(rep), messages=memplace_messages(stderr, rep))
            if label == "cold":
                r["overheads"] = kernel_overheads(rep)
        runs.append(r)
        reference = [x for x in runs if x["variant"] == "original"][-1]["seen"]
        if variant == "memplace" and differing(reference, r["seen"]) and \
                "first_difference" not in row:
            row["first_difference"] = first_difference(
                work / "original", folder, differing(reference, r["seen"]), entry["drop"], label)
    summarize(row)
    return row


def paired_ratio(runs, kind):
    """The median over the memplace runs of one kind ("cold", "warm") of the run's wall time
    over the original's run just before it (interleaved_plan); None without such pairs."""
    ratios, last = [], None
    for r in runs:
        if r["variant"] == "original":
            last = r["wall_s"]
        elif r["label"].startswith(kind) and last:
            ratios.append(r["wall_s"] / last)
    return round(statistics.median(ratios), 3) if ratios else None


def run_to_run_noise(runs):
    """How far one original run is from the next, typically: the median of |b/a - 1| over
    consecutive originals; a ratio of memplace's closer to 1 than this is not resolved."""
    walls = [r["wall_s"] for r in runs if r["variant"] == "original"]
    steps = [abs(b / a - 1) for a, b in zip(walls, walls[1:]) if a]
    return round(statistics.median(steps), 3) if steps else None


def summarize(row):
    """The row's medians, ratios and comparison from its runs."""
    runs = row["runs"]
    orig = [r for r in runs if r["variant"] == "original"]
    cold = [r for r in runs if r["label"].startswith("cold")]
    warm = [r for r in runs if r["label"].startswith("warm")]
    if orig:
        stats = spread(r["wall_s"] for r in orig)
        row.update(original_s=stats["median"], original_min_s=stats["min"],
                   original_max_s=stats["max"])
        ref = orig[-1]["seen"]
        row["original_deterministic"] = all(not differing(ref, r["seen"]) for r in orig)
        row["noise"] = run_to_run_noise(runs)
        mine = cold + warm
        if mine:
            row["differs"] = sorted({f"{r['label']}:{n}" for r in mine
                                     for n in differing(ref, r["seen"])})
            row["bitwise"] = not row["differs"]
        row["failed_runs"] = [f"{r['label']}: exit {r['rc']}" for r in runs if r["rc"] != 0]
        # Outputs that match while the original fails compare two error messages: say so.
        failed = sorted({str(r["rc"]) for r in orig if r["rc"] != 0})
        if failed:
            row["original_failed"] = f"exit {'/'.join(failed)} in {sum(r['rc'] != 0 for r in orig)}" \
                f" of {len(orig)} runs"
    if cold:
        stats = spread(r["wall_s"] for r in cold)
        row.update(cold_s=stats["median"], cold_min_s=stats["min"], cold_max_s=stats["max"])
        row["cold_ratio"] = paired_ratio(runs, "cold")
        if "overheads" in cold[0]:
            row["cold_overhead_ms"] = round(sum(k["overhead_ms"]["total"] or 0
                                                for k in cold[0]["overheads"]), 3)
    if warm:
        stats = spread(r["wall_s"] for r in warm)
        row.update(warm_s=stats["median"], warm_min_s=stats["min"], warm_max_s=stats["max"])
        row["warm_ratio"] = paired_ratio(runs, "warm")
    if cold or warm:
        last = (warm or cold)[-1]
        row["decisions"] = {k: f"{cold[0]['decisions'].get(k, '-') if cold else '-'} -> {v}"
                            for k, v in last["decisions"].items()}
        row["messages"] = list(dict.fromkeys(m for r in cold + warm for m in r["messages"]))[:20]


def check_manifest(out, manifest, programs):
    """Problems that stop a run before it starts: binaries missing, bad patterns or generators."""
    problems = []
    for entry, inp in plan_order(manifest, programs):
        for variant in ("original", "memplace"):
            if entry.get(variant) and not (out / entry[variant]).is_file():
                problems.append(f"{entry['program']}: {entry[variant]} missing")
        if not entry.get("original"):
            problems.append(f"{entry['program']}: no original build ({entry['failures']})")
        for pattern in entry["drop"]:
            try:
                re.compile(pattern)
            except re.error as e:
                problems.append(f"{entry['program']}: drop pattern {pattern!r}: {e}")
        if inp.get("generate") and inp["generate"].get("kind") not in GENERATORS:
            problems.append(f"{entry['program']}/{inp['name']}: unknown generator")
    if any(e.get("fixed_time") for e in manifest["programs"]) and \
            not (out / "fixed_time.so").is_file():
        problems.append("fixed_time.so missing")
    return list(dict.fromkeys(problems))


def unpack_all(out, scratch, manifest):
    """Every binary unpacked and an ELF executable (the dry run's check)."""
    problems = []
    for entry in manifest["programs"]:
        for variant in ("original", "memplace"):
            if entry.get(variant) and (out / entry[variant]).is_file():
                exe = unpack(out, scratch, entry, variant)
                if exe.read_bytes()[:4] != b"\x7fELF" or not os.access(exe, os.X_OK):
                    problems.append(f"{exe}: not an executable")
    return problems


def pack_reports(staged, tgz):
    """Every staged report in one archive: the device tool brings back a limited number of
    files, and ~20 inputs x 9 memplace runs are too many."""
    partial = tgz.with_name(tgz.name + ".partial")
    with tarfile.open(partial, "w:gz") as tar:
        for report in sorted(Path(staged).glob("*.json")):
            tar.add(report, arcname=f"reports/{report.name}")
    partial.replace(tgz)


def input_needs_s(rows, program, runs_per_input):
    """A lower bound of an input's time: its runs at the median original time of the program's
    previous input (a later input is the larger one), and 10 s; an input that cannot fit is
    skipped whole rather than measured in part."""
    previous = [r["original_s"] for r in rows if r["program"] == program and r.get("original_s")]
    return max(10.0, runs_per_input * previous[-1]) if previous else 10.0


def device_name():
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        return p.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def run(opts):
    out, results = Path(opts.out).resolve(), Path(opts.results).resolve()
    scratch = Path(opts.scratch or tempfile.mkdtemp(prefix="memplace-runs-")).resolve()
    manifest = json.loads((out / "manifest.json").read_text())
    plan = plan_order(manifest, opts.programs)
    problems = check_manifest(out, manifest, opts.programs)
    for p in problems:
        print(f"runs.py: {p}", file=sys.stderr)
    no_memplace = [e["program"] for e in manifest["programs"] if not e.get("memplace")]
    budget = Budget(float(os.environ.get(BUDGET_ENV, "420")))
    per_input = opts.reps + opts.cold + opts.warm
    print(f"runs.py: {len(plan)} program inputs, {per_input} runs each (originals {opts.reps}, "
          f"memplace {opts.cold} cold + {opts.warm} warm), budget {budget.seconds:.0f} s"
          + (f"; no memplace build: {', '.join(no_memplace)}" if no_memplace else ""))
    if opts.dry_run:
        problems += unpack_all(out, scratch, manifest)
        for p in problems:
            print(f"runs.py: {p}", file=sys.stderr)
        for entry, inp in plan:
            print(f"  {entry['program']:14} {inp['name']:12} {' '.join(inp['argv'])}")
        return 1 if problems else 0
    results.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(scratch / "reports", ignore_errors=True)  # a reused scratch: this run's only
    doc = {"format": "memplace-public-runs-results", "device": device_name(),
           "budget_s": budget.seconds, "reps": opts.reps, "cold": opts.cold,
           "warm": opts.warm, "rows": [],
           "skipped": [], "build_failures": {e["program"]: e["failures"]
                                             for e in manifest["programs"] if e["failures"]},
           "rewrite": {e["program"]: e.get("rewrite", []) for e in manifest["programs"]}}
    for entry, inp in plan:
        if not entry.get("original") or not (out / entry["original"]).is_file():
            doc["skipped"].append(f"{entry['program']}/{inp['name']}: no original binary")
            continue
        needs = input_needs_s(doc["rows"], entry["program"], per_input)
        if budget.left() < needs:
            doc["skipped"].append(f"{entry['program']}/{inp['name']}: budget"
                                  + (f" (needs {needs:.0f} s or more)" if needs > 10 else ""))
            continue
        row = measure(entry, inp, out, scratch, budget, opts)
        doc["rows"].append(row)
        pack_reports(scratch / "reports", results / "reports.tgz")
        print(f"  {row['program']:14} {row['input']:12} original {row.get('original_s', 0):.3f} s,"
              f" cold {row.get('cold_ratio', '-')}x, warm {row.get('warm_ratio', '-')}x, bitwise "
              f"{row.get('bitwise', '-')} {row.get('skipped', '')}", flush=True)
        (results / "runs.json").write_text(json.dumps(doc, indent=1) + "\n")
    doc["elapsed_s"] = round(budget.seconds - budget.left(), 1)
    (results / "runs.json").write_text(json.dumps(doc, indent=1) + "\n")
    summary = summary_text(doc)
    (results / "summary.md").write_text(summary)
    print("\n" + summary)
    return 0


def summary_text(doc):
    """summary.md: the device, the run counts, the table and the notes under it."""
    table = markdown_table(doc["rows"])
    notes = [f"- skipped: {s}" for s in doc["skipped"]]
    notes += [f"- {r['program']}/{r['input']}: first-run overhead {r['cold_overhead_ms']} ms "
              "(the cold run's report; per kernel in runs.json)"
              for r in doc["rows"] if r.get("cold_overhead_ms")]
    notes += [f"- {r['program']}/{r['input']}: {m}" for r in doc["rows"]
              for m in r.get("messages", [])[:5]]
    notes += [f"- {r['program']}/{r['input']}: failed runs {r['failed_runs']}"
              for r in doc["rows"] if r.get("failed_runs")]
    notes += [f"- build {p}: {f}" for p, f in doc["build_failures"].items()]
    return (f"Device: {doc['device']}; {doc['elapsed_s']} s of {doc['budget_s']:.0f} s; "
            f"whole-process wall times, memplace "
            f"{doc.get('cold', 1)} cold (each with an empty cache) + {doc['warm']} warm runs, "
            f"each right after a run of the original (at least {doc['reps']} in all). Ratios: "
            "the median over memplace's runs of each over the original's run before it; run to "
            "run: the median change between consecutive originals (ratios closer to 1 than "
            "that are not resolved).\n\n"
            + table + ("\n" + "\n".join(notes) + "\n" if notes else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare", help="build the binaries and the manifest (here)")
    p.add_argument("--suite", action="append", required=True, help="NAME=DIR")
    p.add_argument("--carry", required=True, help="the folder carried to the GPU machine")
    p.add_argument("--work", default="out/public/runs-work", help="sources, objects, logs")
    p.add_argument("--build", default="build", help="the CMake build (its lib/ and bin/memplace)")
    p.add_argument("--memplace", help="default: BUILD/bin/memplace")
    p.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    p.add_argument("--programs", nargs="*")
    p.add_argument("--jobs", type=int, default=2)
    f = sub.add_parser("refresh", help="the carried manifest's inputs and timing lines from "
                       "programs.json, without rebuilding (here)")
    f.add_argument("--carry", required=True, help="the folder prepare wrote")
    r = sub.add_parser("run", help="run and compare (on the GPU machine)")
    r.add_argument("out", help="the folder prepare wrote")
    r.add_argument("results")
    r.add_argument("--dry-run", action="store_true")
    r.add_argument("--scratch", help="the runs' folders, inputs and binaries (default: a new "
                   "folder under the system's temporary folder)")
    r.add_argument("--programs", nargs="*")
    r.add_argument("--reps", type=int, default=9, help="runs of the original")
    r.add_argument("--cold", type=int, default=3,
                   help="memplace runs each with an empty decision cache (the first run)")
    r.add_argument("--warm", type=int, default=8, help="memplace runs after the cold ones")
    opts = ap.parse_args()
    if opts.step == "prepare":
        opts.memplace = opts.memplace or str(Path(opts.build) / "bin" / "memplace")
        return prepare(opts)
    return refresh(opts) if opts.step == "refresh" else run(opts)


if __name__ == "__main__":
    sys.exit(main())
