#!/usr/bin/env python3
"""Compares canonical traces (tests/trace/trace_dump.cpp) of the emulator with a GPU's.

  compare_traces.py EMU_DIR GPU_DIR [--programs P ...]

For every <prog>.trace in GPU_DIR, EMU_DIR/<prog>.trace must hold the same launches (kernel, grid,
block, arrays) and, per launch, the same records: the same warp records (block, warp, site,
array, kind, active mask, every active lane's element offset), and at every (block, warp, site,
array) the same records in the same order. The order of records at *different* sites within one
warp is not compared (C++ leaves the order of unsequenced operands to the compiler, and the order
of the two sides of a divergent branch is the compiler's), nor the interleaving of warps and
blocks (the GPU tracer appends with an atomic cursor). That order is reported, for information:
how many warps have their records in the same order as the GPU's.

Exit status: 0 equal, 1 different (the first difference of each program is printed), 77 when
GPU_DIR holds no traces (<prog>.trace, .trace.xz or .trace.gz) (none recorded yet: see docs/emulation.md, "Tracing equality").
"""
import argparse
import gzip
import lzma
import os
import sys

EXTS = (".trace", ".trace.xz", ".trace.gz")


def open_text(path):
    if path.endswith(".xz"):
        return lzma.open(path, "rt")
    if path.endswith(".gz"):
        return gzip.open(path, "rt")
    return open(path)


def find(d, prog):
    for e in EXTS:
        p = os.path.join(d, prog + e)
        if os.path.exists(p):
            return p
    return None


def parse(path):
    """[(header, arrays, records, order)]: records as the canonical lines without `# seq`, order as
    {(block, warp): [record lines in the warp's own order]}."""
    launches = []
    cur = None
    with open_text(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("memplace-canonical-trace"):
                continue
            if line.startswith("launch "):
                parts = line.split()
                cur = {"header": " ".join(parts[2:]), "arrays": [], "records": [], "seq": [],
                       "overflow": parts[-1] != "0", "line": n}
                launches.append(cur)
            elif line.startswith("array "):
                cur["arrays"].append(line)
            elif line == "end":
                cur = None
            else:
                body, _, seq = line.partition(" # seq ")
                cur["records"].append(body)
                cur["seq"].append(int(seq) if seq else 0)
    for l in launches:
        order = {}
        for body, seq in zip(l["records"], l["seq"]):
            f = body.split()
            order.setdefault((f[1], f[2]), []).append((seq, body))
        l["order"] = {k: [b for _, b in sorted(v)] for k, v in order.items()}
    return launches


def compare(emu_path, gpu_path):
    """(ok, message, warps_same_order, warps)"""
    emu, gpu = parse(emu_path), parse(gpu_path)
    if len(emu) != len(gpu):
        return False, "%d launches traced on the emulator, %d on the GPU" % (len(emu), len(gpu)), 0, 0
    same_order = warps = 0
    for i, (e, g) in enumerate(zip(emu, gpu), 1):
        if e["overflow"] or g["overflow"]:
            return False, "launch %d: the trace buffer overflowed (%s)" % (
                i, "emulator" if e["overflow"] else "GPU"), 0, 0
        eh = e["header"].rsplit(" produced", 1)[0]
        gh = g["header"].rsplit(" produced", 1)[0]
        if eh != gh:
            return False, "launch %d: emulator '%s', GPU '%s'" % (i, eh, gh), 0, 0
        if e["arrays"] != g["arrays"]:
            return False, "launch %d (%s): arrays differ: %s vs %s" % (i, eh, e["arrays"], g["arrays"]), 0, 0
        if e["records"] != g["records"]:
            for k, (a, b) in enumerate(zip(e["records"], g["records"])):
                if a != b:
                    return False, ("launch %d (%s), record %d of %d/%d:\n  emulator: %s\n  GPU:      %s" % (
                        i, eh, k, len(e["records"]), len(g["records"]), a[:300], b[:300])), 0, 0
            k = min(len(e["records"]), len(g["records"]))
            extra = e["records"][k] if len(e["records"]) > k else g["records"][k]
            return False, ("launch %d (%s): %d records on the emulator, %d on the GPU; first extra: %s" % (
                i, eh, len(e["records"]), len(g["records"]), extra[:300])), 0, 0
        for key, seq in g["order"].items():
            warps += 1
            same_order += e["order"].get(key) == seq
    return True, "", same_order, warps


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("emu_dir")
    ap.add_argument("gpu_dir")
    ap.add_argument("--programs", nargs="*")
    args = ap.parse_args()
    gpu = []
    if os.path.isdir(args.gpu_dir):
        gpu = sorted({f.split(".trace")[0] for f in os.listdir(args.gpu_dir) if any(f.endswith(e) for e in EXTS)})
    if args.programs:
        gpu = [p for p in gpu if p in args.programs]
    if not gpu:
        print("SKIP: no GPU traces in %s yet: record them on a GPU with tests/trace/record_gpu_traces.sh "
              "(docs/emulation.md, 'Tracing equality') and commit them there" % args.gpu_dir)
        sys.exit(77)
    bad = skipped = 0
    for p in gpu:
        ep = find(args.emu_dir, p) or os.path.join(args.emu_dir, p + ".trace")
        if os.path.exists(os.path.join(args.emu_dir, p + ".nondeterministic")):
            print("skip %-18s not deterministic: its emulated trace changes with the order of "
                  "blocks (atomics hand out positions)" % p)
            skipped += 1
            continue
        if not os.path.exists(ep):
            print("FAIL %-18s no emulated trace (%s)" % (p, ep))
            bad += 1
            continue
        ok, msg, same, warps = compare(ep, find(args.gpu_dir, p))
        if ok:
            n = sum(len(l["records"]) for l in parse(ep))
            print("ok   %-18s %7d records equal; %d of %d warps also in the GPU's record order" % (
                p, n, same, warps))
        else:
            print("FAIL %-18s %s" % (p, msg))
            bad += 1
    print("%d of %d programs: emulated traces equal to the GPU's (%d not deterministic, not compared)" % (
        len(gpu) - bad - skipped, len(gpu) - skipped, skipped))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
