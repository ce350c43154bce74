#!/usr/bin/env python3
"""The bad-input sweep (issue 30): every kind of bad input the docs name, against the `memplace`
CLI and against a rewritten program running under the CPU emulation layer.

    tests/hardening/bad_input_sweep.py --build build [--quick] [--out DIR] [--jobs N]

Inputs, by group (docs/hardening.md lists every case):
  spec     MSL files: truncations, huge/NaN/negative/overflowing numbers, deep and huge
           conditions, cycles, random bytes, non-UTF-8, very long names, many memories
  trace    text, binary and PORPLE traces: truncations, bit flips, huge headers, huge `traced`
           ranges, grids whose product overflows, many arrays, out-of-range records
  source   CUDA sources for `memplace analyze`/`rewrite`: unparsable, deep expressions,
           non-UTF-8 names and bytes, very long names, huge files
  env      every MEMPLACE_* variable the sources read (getenv), with NaN, inf, negative, huge,
           garbage, empty, very long and non-UTF-8 values, against the rewritten program
  cache    decision-cache files: corrupt, truncated, wrong version and types, non-UTF-8,
           tampered decisions, not a regular file
  paths    report and output paths: a symlink, a FIFO, a device node, a symlink to /dev/null, a
           directory, a read-only folder, an existing file without --force
  options  numeric CLI options out of range (NaN, negative, huge)

Each case runs with a time limit and an address-space limit (RLIMIT_AS) and is classified:
  ok        exit 0, 1 or 2, and a message when it fails
  CRASH     a signal, an exit code above 2, an uncaught exception, a sanitizer report
  HANG      the time limit was reached
  OOM       the memory limit was reached (std::bad_alloc, ENOMEM)
  REPLACED  a path that is not a regular file, or an existing file without --force, was
            replaced (its inode or type changed, or its content without --force)
  WRONG     the program's results differ from MEMPLACE=off, the program failed (exit != 0:
            no fallback), a CLI failure without a message, a NaN/inf in `place` output, or
            an error message ending in "Success" (its errno overwritten)
  NOISY     stderr above --max-stderr bytes (default 1 MB)
The table by group and category and every failure with a command that reproduces it are
printed; results.json in --out holds every case. Exit status 1 when anything failed.

Safety: paths that are not regular files are made inside the case's own folder (symlinks to
/dev/null, a private device node made with mknod): the sweep never names a system path as an
output, so a failure replaces nothing outside its folder.
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import resource
import select
import shlex
import shutil
import signal
import stat
import struct
import subprocess
import sys
import threading
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CATEGORIES = ["CRASH", "HANG", "OOM", "REPLACED", "WRONG", "NOISY"]


# ---- cases ----------------------------------------------------------------------------------

class Run:
    """One command on one input. argv items and env values may hold {placeholders}: {dir} (the
    input's folder), {memplace}, {prog}, and whatever the input's make() returned."""

    def __init__(self, name, argv, env=None, target="cli", watch=(), fifo_readers=(),
                 check_nan=False):
        self.name = name
        self.argv = argv
        self.env = env or {}
        self.target = target          # "cli" or "prog"
        self.watch = list(watch)      # paths that must keep their inode/type (and content)
        self.fifo_readers = list(fifo_readers)
        self.check_nan = check_nan


def lookup_run(name, env, **kw):
    """The program's lookup kernel under env (its results compared with MEMPLACE=off)."""
    return Run(name, ["{prog}", "lookup"], env=env, target="prog", **kw)


class Input:
    """An input (files made by make(dir) -> dict of placeholders) and the runs on it."""

    def __init__(self, group, name, make, runs):
        self.group = group
        self.name = name
        self.make = make
        self.runs = runs

    @property
    def id(self):
        return "%s/%s" % (self.group, self.name)


class Ctx:
    """What every generator may use: the tools, the base inputs, quick or full."""

    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.rng = random.Random(args.seed)
        self.lock = threading.Lock()
        self.references = {}

    def pick(self, seq, k):
        """All of seq in full mode; k evenly spaced items in quick mode."""
        seq = list(seq)
        if not self.quick or len(seq) <= k:
            return seq
        if k <= 1:
            return seq[:k]
        return [seq[round(i * (len(seq) - 1) / (k - 1))] for i in range(k)]


def write(path, data):
    if callable(data):
        data = data()
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8", "surrogateescape"))
    return path


def file_input(group, name, data, runs, filename="input"):
    def make(d):
        fname = filename if isinstance(filename, str) else os.fsdecode(filename)
        write(os.path.join(d, fname), data)
        return {"in": os.path.join(d, fname)}
    return Input(group, name, make, runs)


# ---- MSL specs ------------------------------------------------------------------------------

def base_spec():
    with open(os.path.join(ROOT, "specs", "h100.msl"), encoding="utf-8") as f:
        return f.read()


def set_field(text, field, value, block=None):
    """Replace the first `field = ...;` (inside `memory BLOCK {` when given)."""
    start = 0
    if block is not None:
        start = text.index("memory %s {" % block)
    m = re.compile(r"(\n\s*%s\s*=\s*)[^;]*;" % re.escape(field)).search(text, start)
    if m is None:
        raise KeyError(field)
    return text[:m.start()] + m.group(1) + value + ";" + text[m.end():]


BAD_NUMBERS = ["0", "-1", "0.5", "1e9", "1000000000", "2147483648", "4294967295", "4294967296",
               "18446744073709551616", "99999999999999999999999999999999", "1e308", "1e309",
               "nan", "inf", "-inf", "-0", "0x10"]
PROCESSOR_FIELDS = ["sms", "warpSize", "clock", "maxThreadsPerSm", "maxBlocksPerSm",
                    "maxRegistersPerSm", "maxSharedPerSm", "maxThreadsPerBlock",
                    "maxRegistersPerBlock", "maxRegistersPerThread", "maxSharedPerBlock",
                    "reservedSharedPerBlock", "registerAllocationUnit", "sharedAllocationUnit",
                    "unitOverlap"]
MEMORY_FIELDS = [("shared", "size"), ("shared", "blockSize"), ("shared", "banks"),
                 ("shared", "latency"), ("shared", "concurrencyFactor"), ("L1", "size"),
                 ("L1", "blockSize"), ("texL1", "requestCost"), ("global", "size"),
                 ("shared", "id")]


def spec_runs(ctx, with_program=False, place=True, show=True):
    runs = [Run("check", ["{memplace}", "spec", "check", "{in}"])]
    if show:
        runs.append(Run("show-json", ["{memplace}", "spec", "show", "{in}", "--json"]))
    if place:
        # Text output: JSON writes a NaN as null.
        runs.append(Run("place", ["{memplace}", "place", "{saxpy_text}", "--spec", "{in}"],
                        check_nan=True))
        if show:
            runs.append(Run("place-json", ["{memplace}", "place", "{saxpy_text}", "--spec",
                                           "{in}", "--json"]))
    if with_program and ctx.program:
        runs.append(lookup_run("program", {"MEMPLACE_SPEC": "{in}"}))
    return runs


def spec_inputs(ctx):
    base = base_spec()
    out = []
    n = 40 if not ctx.quick else 4
    for cut in ctx.pick(sorted({len(base) * i // n for i in range(1, n)}), 4):
        out.append(file_input("spec", "truncated-%d" % cut, base[:cut],
                              spec_runs(ctx, place=False)))
    # Numbers: every field with every bad value (quick: the ones the issue names).
    cases = []
    for field in PROCESSOR_FIELDS:
        for v in BAD_NUMBERS:
            cases.append((field, None, v))
    for block, field in MEMORY_FIELDS:
        for v in BAD_NUMBERS:
            cases.append((field, block, v))
    if ctx.quick:
        cases = [("sms", None, "1000000000"), ("sms", None, "2147483648"), ("sms", None, "nan"),
                 ("warpSize", None, "4294967295"), ("clock", None, "inf"),
                 ("unitOverlap", None, "nan"), ("size", "shared", "-1"),
                 ("latency", "shared", "nan"), ("banks", "shared", "0")]
    program_cases = {("sms", None, "nan"), ("sms", None, "1000000000"), ("banks", "shared", "0"),
                     ("warpSize", None, "4294967295")}
    for field, block, v in cases:
        value = v
        if field in ("latency", "concurrencyFactor"):
            value = "(%s, %s)" % (v, v)
        elif field in ("size", "maxSharedPerSm", "maxSharedPerBlock") and ctx.rng.random() < 0.5:
            value = v + " KB"
        elif field == "clock":
            value = v + " MHz"
        try:
            text = set_field(base, field, value, block)
        except (KeyError, ValueError):
            continue
        name = "number-%s%s=%s" % (block + "." if block else "", field, v)
        out.append(file_input("spec", name, text,
                              spec_runs(ctx, with_program=(field, block, v) in program_cases,
                                        show=ctx.quick)))
    # Conditions: deep (left-deep && chains, nested parentheses, unary chains) and huge.
    def cond(expr):
        return set_field(base, "serialCondition", "block{ %s }" % expr, "shared")
    terms = [15000] if ctx.quick else [2000, 15000, 100000]
    for k in terms:
        expr = " && ".join(["word1 != word2"] * k)
        out.append(file_input("spec", "condition-and-%d" % k, cond(expr),
                              spec_runs(ctx, with_program=(k == 15000))))
    for k in ([100000] if ctx.quick else [1000, 100000]):
        out.append(file_input("spec", "condition-parens-%d" % k,
                              cond("(" * k + "word1 != word2" + ")" * k), spec_runs(ctx)))
    if not ctx.quick:
        out.append(file_input("spec", "condition-unary-100000",
                              cond("-" * 100000 + "word1 != word2"), spec_runs(ctx)))
        out.append(file_input("spec", "condition-huge-1MB",
                              cond(" || ".join(["word1 % 7 == word2 % 5"] * 45000)),
                              spec_runs(ctx)))
        out.append(file_input("spec", "condition-division-by-zero",
                              cond("word1 / 0 != word2 % 0"), spec_runs(ctx, with_program=True)))
    # Cycles in the hierarchy.
    cyc = set_field(base, "lowerLevels", "(L1)", "L2")
    out.append(file_input("spec", "cycle-L1-L2", cyc, spec_runs(ctx, with_program=True)))
    out.append(file_input("spec", "cycle-self", set_field(base, "lowerLevels", "(L1)", "L1"),
                          spec_runs(ctx)))
    out.append(file_input("spec", "upper-lower-mismatch",
                          set_field(base, "upperLevels", "(global)", "L2"), spec_runs(ctx)))
    # Random bytes, non-UTF-8, long names, many memories, empty.
    for size in ctx.pick([1024, 65536, 1 << 20], 2):
        data = random.Random(size).randbytes(size)
        out.append(file_input("spec", "random-%d" % size, data, spec_runs(ctx, place=False)))
    out.append(file_input("spec", "random-printable-1MB",
                          lambda: "".join(random.Random(7).choices("abc{}();=, \n#0123456789.",
                                                                   k=1 << 20)),
                          spec_runs(ctx, place=False)))
    latin = base.encode().replace(b'name = "NVIDIA H100 SXM5 80GB"', b'name = "H100 \xe9\xff\xfe"')
    out.append(file_input("spec", "non-utf8-name", latin, spec_runs(ctx, with_program=True)))
    out.append(file_input("spec", "non-utf8-comment", b"# caf\xe9\n" + base.encode(),
                          spec_runs(ctx)))
    out.append(file_input("spec", "non-utf8-memory-name",
                          base.encode().replace(b"memory constant {", b"memory const\xe9nt {"),
                          spec_runs(ctx)))
    out.append(file_input("spec", "non-utf8-filename", base, spec_runs(ctx),
                          filename=os.fsdecode(b"spec-\xe9\xff.msl")))
    # A name close to another long name: "did you mean" compares the two.
    def typo(k=200000):
        return base.replace("memory constant {", "memory %s {" % ("c" * k)).replace(
            "lowerLevels = (global, constant);", "lowerLevels = (global, %sd);" % ("c" * (k - 1)))
    out.append(file_input("spec", "long-memory-name-typo-200000", typo,
                          spec_runs(ctx, place=False, show=not ctx.quick)))
    for k in [20000] if ctx.quick else [20000, 200000]:
        out.append(file_input("spec", "long-field-name-%d" % k,
                              base.replace("sms = 132;", "%s = 132;" % ("s" * k), 1),
                              spec_runs(ctx, place=False)))
        out.append(file_input("spec", "long-memory-name-%d" % k,
                              base.replace("memory constant {", "memory %s {" % ("c" * k)),
                              spec_runs(ctx, place=False)))
    if not ctx.quick:
        block = base[base.index("memory shared {"):base.index("memory L1 {")]
        many = lambda: base + "".join(block.replace("memory shared {", "memory s%d {" % i)
                                      .replace("id = 1;", "id = %d;" % (100 + i))
                                      for i in range(5000))
        out.append(file_input("spec", "many-memories-5000", many, spec_runs(ctx)))
        out.append(file_input("spec", "duplicate-ids",
                              set_field(base, "id", "1", "L1"), spec_runs(ctx)))
    out.append(file_input("spec", "empty", b"", spec_runs(ctx, place=False)))
    out.append(file_input("spec", "nul-bytes", base.encode().replace(b"sms", b"s\0ms", 1),
                          spec_runs(ctx, place=False)))
    return out


# ---- traces ---------------------------------------------------------------------------------

def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag(v):
    return (v << 1) ^ (v >> 63) if v >= 0 else ((-v) << 1) - 1


def binary_trace(kernel=b"k", grid=(4, 1, 1), block=(64, 1, 1), arrays=None, traced=None,
                 records=None, fix=None):
    """A binary trace (docs/trace-format.md, section 3) built from parts; fix(fields) may change
    the fixed header's fields (H, R, L, B) before they are written. The CRC is always right."""
    arrays = arrays if arrays is not None else [(b"x", 4, 256, 0, 0x7E, 0, 1, 0)]
    records = records if records is not None else [(0, 0, 0, 0, 0, 0xFFFFFFFF, list(range(32)))]
    h = bytearray(uleb(len(kernel)) + kernel)
    for v in tuple(grid) + tuple(block):
        h += uleb(v)
    h += bytes([0])  # no registers, no shared
    h += uleb(len(arrays))
    for name, elem, length, mode, places, original, dims, row in arrays:
        h += uleb(len(name)) + name + uleb(elem) + uleb(length) + bytes([mode]) + uleb(places)
        h += bytes([original]) + uleb(dims) + uleb(row)
    traced = traced or []
    h += uleb(len(traced))
    prev = None
    for t in traced:
        h += uleb(t if prev is None else t - prev)
        prev = t
    body = bytearray()
    lanes = 0
    prev_first = {}
    for blk, warp, site, arr, kind, mask, offs in records:
        body += uleb(blk) + uleb(warp) + uleb(site) + uleb(arr) + bytes([kind])
        body += struct.pack("<I", mask)
        first = offs[0] if offs else 0
        body += uleb(zigzag(first - prev_first.get(arr, 0)))
        prev_first[arr] = first
        for a, b in zip(offs, offs[1:]):
            body += uleb(zigzag(b - a))
        lanes += len(offs)
    fields = {"H": len(h), "R": len(records), "L": lanes, "B": len(body)}
    if fix:
        fix(fields)
    head = b"MPTRACE\x1a" + struct.pack("<HHI", 1, 0, 0)
    head += struct.pack("<QQQQ", fields["H"] & (2**64 - 1), fields["R"] & (2**64 - 1),
                        fields["L"] & (2**64 - 1), fields["B"] & (2**64 - 1))
    data = head + bytes(h) + bytes(body)
    return data + struct.pack("<I", zlib.crc32(data) & 0xFFFFFFFF)


def fix_crc(data):
    if len(data) < 4:
        return data
    return data[:-4] + struct.pack("<I", zlib.crc32(data[:-4]) & 0xFFFFFFFF)


def trace_runs(ctx):
    place = Run("place", ["{memplace}", "place", "{in}", "--spec", "h100"], check_nan=True)
    if ctx.quick:
        return [Run("info-json", ["{memplace}", "trace", "info", "{in}", "--json"]), place]
    return [Run("info", ["{memplace}", "trace", "info", "{in}"]),
            Run("info-json", ["{memplace}", "trace", "info", "{in}", "--json"]), place,
            Run("place-json", ["{memplace}", "place", "{in}", "--spec", "h100", "--json"]),
            Run("convert", ["{memplace}", "trace", "convert", "{in}", "-o", "{dir}/out.trace",
                            "--to", "text", "--force"])]


def text_trace(lines):
    return "\n".join(lines) + "\n"


def trace_inputs(ctx):
    out = []
    with open(os.path.join(ROOT, "examples", "traces", "saxpy.trace"), encoding="utf-8") as f:
        saxpy = f.read()
    lines = saxpy.splitlines()[:400]
    small = "\n".join(lines) + "\n"
    # Text: truncations and bit flips of a real trace.
    n = 30 if not ctx.quick else 3
    for cut in ctx.pick(sorted({len(small) * i // n for i in range(1, n)}), 3):
        out.append(file_input("trace", "text-truncated-%d" % cut, small[:cut], trace_runs(ctx)))
    rng = random.Random(11)
    data = small.encode()
    for i in range(40 if not ctx.quick else 3):
        pos, bit = rng.randrange(min(len(data), 800)), rng.randrange(8)
        m = bytearray(data)
        m[pos] ^= 1 << bit
        out.append(file_input("trace", "text-bitflip-%d.%d" % (pos, bit), bytes(m),
                              trace_runs(ctx)))
    # Text: header and record mutations.
    head = ["memplace-trace 1", "kernel k", "grid 4 1 1", "block 64 1 1",
            "array x elem=4 length=256 mode=read"]
    rec = ["r 0 0 0 x * 0..31"]

    def variant(name, header_sub=None, extra_header=(), records=None, quick=False):
        h = list(head)
        for old, new in (header_sub or {}).items():
            h = [new if l.startswith(old) else l for l in h]
        if ctx.quick and not quick:
            return
        out.append(file_input("trace", "text-" + name,
                              text_trace(h + list(extra_header) + (records or rec)),
                              trace_runs(ctx)))

    variant("grid-product-overflow", {"grid": "grid 2147483648 2147483648 4"}, quick=True)
    variant("grid-product-overflow-no-records", {"grid": "grid 4294967295 4294967295 4294967295"},
            records=[], quick=True)
    variant("grid-product-wraps-to-1", {"grid": "grid 4294967297 1 1"}, records=[])
    variant("grid-max", {"grid": "grid 4294967295 4294967295 4294967295"}, quick=True)
    variant("grid-2^32", {"grid": "grid 4294967296 1 1"})
    variant("grid-zero", {"grid": "grid 0 1 1"})
    variant("grid-negative", {"grid": "grid -1 1 1"})
    variant("grid-nan", {"grid": "grid nan 1 1"})
    variant("block-huge", {"block": "block 1024 1024 64"})
    variant("block-max", {"block": "block 4294967295 1 1"}, quick=True)
    variant("block-zero", {"block": "block 0 1 1"})
    variant("registers-max", extra_header=["registers 4294967295"])
    variant("registers-2^64", extra_header=["registers 18446744073709551616"])
    variant("shared-max", extra_header=["shared 18446744073709551615"], quick=True)
    variant("traced-1G", {"grid": "grid 1073741824 1 1"}, ["traced 0-1073741823"], quick=True)
    variant("traced-4G", {"grid": "grid 4294967295 1 1"}, ["traced 0-4294967294"])
    variant("traced-outside-grid", extra_header=["traced 0-100"])
    variant("traced-reversed", extra_header=["traced 3-1"])
    variant("traced-many", {"grid": "grid 4294967295 1 1"},
            ["traced " + " ".join(str(i * 7) for i in range(200000))])
    variant("array-elem-0", {"array": "array x elem=0 length=256 mode=read"})
    variant("array-elem-huge", {"array": "array x elem=4294967296 length=256 mode=read"})
    variant("array-length-max", {"array": "array x elem=4 length=18446744073709551615 mode=read"},
            quick=True)
    variant("array-length-product-overflow",
            {"array": "array x elem=4096 length=18446744073709551615 mode=read"})
    variant("array-dims2-row0", {"array": "array x elem=4 length=256 mode=read dims=2 row=0"})
    variant("array-dims3", {"array": "array x elem=4 length=256 mode=read dims=3 row=16"})
    variant("array-name-non-utf8", {"array": "array x\udce9 elem=4 length=256 mode=read"},
            records=["r 0 0 0 x\udce9 * 0..31"], quick=True)
    variant("kernel-name-non-utf8", {"kernel": "kernel k\udce9\udcff"}, quick=True)
    variant("kernel-name-long", {"kernel": "kernel " + "k" * 200000})
    variant("record-offset-max", records=["r 0 0 0 x * 18446744073709551615"])
    variant("record-range-huge", records=["r 0 0 0 x * 0..4294967295"])
    variant("record-repeat-huge", records=["r 0 0 0 x * 1x4294967296"], quick=True)
    variant("record-step-zero", records=["r 0 0 0 x * 0..31:0"])
    variant("record-step-mismatch", records=["r 0 0 0 x * 0..31:-3"])
    variant("record-block-max", records=["r 4294967295 0 0 x * 0..31"])
    variant("record-warp-max", records=["r 0 4294967295 0 x * 0..31"])
    variant("record-site-max", records=["r 0 0 18446744073709551615 x * 0..31"])
    variant("record-mask-zero", records=["r 0 0 0 x 0x00000000"])
    variant("record-write-to-read", records=["w 0 0 0 x * 0..31"])
    for count in ctx.pick([65535, 65536], 1):
        arrays = ["array a%d elem=4 length=1 mode=read" % i for i in range(count)]
        out.append(file_input("trace", "text-arrays-%d" % count,
                              text_trace(head[:4] + arrays + ["r 0 0 0 a0 * 0"]),
                              trace_runs(ctx)))
    # Binary: truncations and bit flips (raw and with the CRC repaired) of a valid trace.
    good = binary_trace(records=[(b, w, 0, 0, 0, 0xFFFFFFFF, list(range(32)))
                                 for b in range(4) for w in range(2)])
    n = 30 if not ctx.quick else 3
    for cut in ctx.pick(sorted({len(good) * i // n for i in range(1, n)}), 3):
        out.append(file_input("trace", "binary-truncated-%d" % cut, good[:cut], trace_runs(ctx)))
    for i in range(60 if not ctx.quick else 4):
        pos, bit = rng.randrange(len(good) - 4), rng.randrange(8)
        m = bytearray(good)
        m[pos] ^= 1 << bit
        m = bytes(m)
        if i % 2:
            m = fix_crc(m)
        name = "binary-bitflip-%d.%d%s" % (pos, bit, "-crc" if i % 2 else "")
        out.append(file_input("trace", name, m, trace_runs(ctx)))
    # Binary: huge headers, with a right CRC so that the structural checks are reached.
    def bvariant(name, quick=False, **kw):
        if ctx.quick and not quick:
            return
        out.append(file_input("trace", "binary-" + name, binary_trace(**kw), trace_runs(ctx)))

    bvariant("grid-product-overflow", quick=True, grid=(2**31, 2**31, 4))
    bvariant("grid-product-overflow-no-records", quick=True, grid=(2**31, 2**31, 4), records=[])
    bvariant("grid-2^40", grid=(2**40, 1, 1))
    bvariant("block-huge", block=(2**32 - 1, 1, 1))
    bvariant("header-bytes-max", quick=True, fix=lambda f: f.update(H=2**63))
    bvariant("records-max", quick=True, fix=lambda f: f.update(R=2**62))
    bvariant("lanes-max", fix=lambda f: f.update(L=2**64 - 1))
    bvariant("body-bytes-max", fix=lambda f: f.update(B=2**64 - 1))
    bvariant("array-count-65536", quick=True,
             arrays=[(b"a%d" % i, 4, 256, 0, 0x7E, 0, 1, 0) for i in range(65536)])
    bvariant("array-length-max", arrays=[(b"x", 4, 2**64 - 1, 0, 0x7E, 0, 1, 0)],
             records=[(0, 0, 0, 0, 0, 1, [2**63 - 1])])
    bvariant("array-elem-huge", arrays=[(b"x", 2**40, 256, 0, 0x7E, 0, 1, 0)])
    bvariant("array-name-non-utf8", quick=True, arrays=[(b"x\xe9\xff", 4, 256, 0, 0x7E, 0, 1, 0)])
    bvariant("kernel-name-non-utf8", kernel=b"k\xe9\xff")
    bvariant("kernel-name-1MB", kernel=b"k" * (1 << 20))
    bvariant("traced-1G", quick=True, grid=(2**30, 1, 1), traced=list(range(0, 2**30, 2**30 // 4)))
    bvariant("traced-many", grid=(2**31, 1, 1), traced=list(range(0, 2**31, 2**31 // 200000)))
    bvariant("mask-zero", records=[(0, 0, 0, 0, 0, 0, [])])
    bvariant("offset-outside", records=[(0, 0, 0, 0, 0, 1, [2**40])])
    bvariant("array-index-outside", records=[(0, 0, 0, 5, 0, 1, [0])])
    bvariant("varint-overflow", kernel=b"k", fix=None,
             records=[(2**70, 0, 0, 0, 0, 1, [0])])
    # PORPLE.
    porple_head = ["dimension 1 1", "sizeof 4 4", "block_X 1 1", "block_Y 1 1",
                   "array_size 64 64"]
    porple_recs = ["0 0 0 0 0 1", "0 0 0 0 1 2", "1 1 0 0 0 3", "1 0 1 2 33 4"]

    def pvariant(name, head_sub=None, recs=None, quick=False):
        if ctx.quick and not quick:
            return
        h = list(porple_head)
        for old, new in (head_sub or {}).items():
            h = [new if l.startswith(old) else l for l in h]
        out.append(file_input("trace", "porple-" + name, text_trace(h + (recs or porple_recs)),
                              trace_runs(ctx)))

    pvariant("valid")
    pvariant("thread-2^40", recs=["0 0 0 0 %d 1" % 2**40], quick=True)
    pvariant("thread-2^32+5", recs=["0 0 0 0 %d 1" % (2**32 + 5)])
    pvariant("thread-negative", recs=["0 0 0 0 -1 1"])
    pvariant("array-size-max", {"array_size": "array_size 18446744073709551615 64"}, quick=True)
    pvariant("array-size-negative", {"array_size": "array_size -1 64"})
    pvariant("sizeof-zero", {"sizeof": "sizeof 0 4"})
    pvariant("sizeof-huge", {"sizeof": "sizeof 4294967296 4"})
    pvariant("dimension-3", {"dimension": "dimension 3 1"})
    pvariant("blockx-zero-2d", {"dimension": "dimension 2 1", "block_X": "block_X 0 1"})
    pvariant("index-outside", recs=["0 0 0 0 0 1000000"])
    pvariant("index-nan", recs=["0 0 0 0 0 nan"])
    pvariant("columns-65536", {k: k + " " + " ".join(["1"] * 65535) for k in
                               ["dimension", "sizeof", "block_X", "block_Y"]} |
             {"array_size": "array_size " + " ".join(["64"] * 65537)}, quick=True)
    pvariant("header-only", recs=[""])
    ptext = text_trace(porple_head + porple_recs)
    for cut in ctx.pick(range(5, len(ptext), max(1, len(ptext) // 10)), 2):
        out.append(file_input("trace", "porple-truncated-%d" % cut, ptext[:cut], trace_runs(ctx)))
    out.append(file_input("trace", "empty", b"", trace_runs(ctx)))
    out.append(file_input("trace", "random-64KB",
                          random.Random(3).randbytes(65536),
                          trace_runs(ctx)))
    return out


# ---- CUDA sources ---------------------------------------------------------------------------

KERNEL = """__global__ void %s(int n, const float* a, float* b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = %s;
}
"""


def source_runs(ctx):
    return [Run("analyze", ["{memplace}", "analyze", "{in}"]),
            Run("analyze-json", ["{memplace}", "analyze", "{in}", "--json"]),
            Run("rewrite-json", ["{memplace}", "rewrite", "{in}", "-o", "{dir}/out", "--force",
                                 "--json"])]


def source_inputs(ctx):
    out = []

    def src(name, text, quick=False, filename="k.cu"):
        if ctx.quick and not quick:
            return
        out.append(file_input("source", name, text, source_runs(ctx), filename=filename))

    src("valid", KERNEL % ("k", "a[i] * 2.0f"), quick=True)
    src("unparsable", "__global__ void k(float* a { a[0] = ; }\n", quick=True)
    src("empty", "")
    src("random-64KB", random.Random(5).randbytes(65536))
    for k in [10000] if ctx.quick else [1000, 10000, 100000]:
        src("deep-sum-%d" % k, KERNEL % ("k", " + ".join(["a[i]"] * k)), quick=True)
    src("deep-parens-2000", KERNEL % ("k", "(" * 2000 + "a[i]" + ")" * 2000))
    src("deep-index-2000", KERNEL % ("k", "a[" * 2000 + "i" + "]" * 2000))
    src("deep-ternary-5000", KERNEL % ("k", "i > 0 ? " * 5000 + "a[i]" + " : a[0]" * 5000))
    src("non-utf8-filename", KERNEL % ("k", "a[i]"), quick=True,
        filename=os.fsdecode(b"caf\xe9.cu"))
    src("non-utf8-comment", b"// caf\xe9 \xff\n" + (KERNEL % ("k", "a[i]")).encode(), quick=True)
    src("non-utf8-string", b'const char* s = "\xe9\xff";\n' + (KERNEL % ("k", "a[i]")).encode())
    src("non-utf8-identifier", (KERNEL % ("k\udce9", "a[i]")).encode("utf-8", "surrogateescape"))
    src("long-kernel-name", KERNEL % ("k" * 100000, "a[i]"))
    src("many-kernels-5000", lambda: "".join(KERNEL % ("k%d" % i, "a[i]") for i in range(5000)))
    src("many-params-300", "__global__ void k(int n, %s) { int i = threadIdx.x; %s }\n" % (
        ", ".join("float* p%d" % j for j in range(300)),
        " ".join("p%d[i] = p%d[i] + 1.0f;" % (j, (j + 1) % 300) for j in range(300))))
    src("huge-20MB", lambda: ("// %s\n" % ("y" * 200)) * 100000 + KERNEL % ("k", "a[i]"))
    src("self-include", '#include "k.cu"\n' + KERNEL % ("k", "a[i]"))
    return out


# ---- environment ----------------------------------------------------------------------------

# Read by the runtime, the Placer and the emulation layer (a rewritten program); discovered
# from the sources too (discover_env_vars), so that a new variable is swept without an edit.
KNOWN_ENV = ["MEMPLACE", "MEMPLACE_CACHE", "MEMPLACE_DISPATCH", "MEMPLACE_EMU_FATAL",
             "MEMPLACE_EMU_SPIN_TIMEOUT_S", "MEMPLACE_EMU_STACK_KB", "MEMPLACE_EMU_THREADS",
             "MEMPLACE_JIT", "MEMPLACE_JIT_CACHE", "MEMPLACE_JIT_OPTIONS", "MEMPLACE_JIT_SYNC",
             "MEMPLACE_L2_LIMIT", "MEMPLACE_NVRTC", "MEMPLACE_PROFILE", "MEMPLACE_PROFILE_LOOPS",
             "MEMPLACE_PROFILE_MIN_UNITS", "MEMPLACE_PROFILE_REPORT",
             "MEMPLACE_PROFILE_TOLERANCE", "MEMPLACE_QUIET", "MEMPLACE_REPORT", "MEMPLACE_SEARCH",
             "MEMPLACE_SEARCH_MS", "MEMPLACE_SPEC", "MEMPLACE_SPEC_DIR", "MEMPLACE_TIME",
             "MEMPLACE_TIMING_SPIN_US", "MEMPLACE_TRACE_BLOCKS", "MEMPLACE_TRACE_DIR",
             "MEMPLACE_TRACE_RECORDS", "MEMPLACE_TRACE_SMS", "MEMPLACE_TRACE_WAVES",
             "MEMPLACE_TUNE", "MEMPLACE_TUNE_EXPLORE", "MEMPLACE_VERIFY"]
# MEMPLACE=sweep's variables are swept with MEMPLACE=sweep set.
SWEEP_ENV = ["MEMPLACE_SWEEP_BUDGET_MS", "MEMPLACE_SWEEP_COMPARE_SPEC", "MEMPLACE_SWEEP_KERNELS",
             "MEMPLACE_SWEEP_MAX", "MEMPLACE_SWEEP_NO_DYNAMIC", "MEMPLACE_SWEEP_ORIGINAL",
             "MEMPLACE_SWEEP_OUT", "MEMPLACE_SWEEP_REPEAT", "MEMPLACE_SWEEP_SEED",
             "MEMPLACE_SWEEP_SPIN_US", "MEMPLACE_SWEEP_TOP", "MEMPLACE_SWEEP_WARMUP"]
PATH_ENV = {"MEMPLACE_CACHE", "MEMPLACE_JIT_CACHE", "MEMPLACE_NVRTC", "MEMPLACE_PROFILE_REPORT",
            "MEMPLACE_REPORT", "MEMPLACE_SPEC", "MEMPLACE_SPEC_DIR", "MEMPLACE_TRACE_DIR",
            "MEMPLACE_SWEEP_COMPARE_SPEC", "MEMPLACE_SWEEP_ORIGINAL", "MEMPLACE_SWEEP_OUT"}
# Not read by a rewritten program (build-time, test-only or GPU-probe variables).
NOT_PROGRAM_ENV = {"MEMPLACE_VERSION", "MEMPLACE_HAVE_FRONTEND", "MEMPLACE_EMU_ASAN",
                   "MEMPLACE_UPDATE_GOLDEN", "MEMPLACE_CLANG_TOOL", "MEMPLACE_CLANG_RESOURCE_DIR"}

BAD_VALUES = ["nan", "inf", "-inf", "-1", "0", "1e300", "18446744073709551617", "abc", "",
              "1x", "0x10", " 5", "9" * 100000, "\udcff\udcfe"]
PATH_VALUES = ["{dir}/missing/x", "{dir}", "{dir}/garbage", "{dir}/\udce9\udcff",
               "{dir}/" + "p" * 5000, "", "\udcff"]


def discover_env_vars(source):
    """MEMPLACE_* names read with getenv in the runtime, Placer and emulation sources."""
    names = set()
    pat = re.compile(r'"(MEMPLACE(?:_[A-Z0-9_]+)?)"')
    for sub in ("runtime", "placer", "emu", "common"):
        for dirpath, _, files in os.walk(os.path.join(source, sub)):
            for f in files:
                if f.endswith((".cpp", ".h", ".cuh", ".hpp")):
                    with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                        text = fh.read()
                    if "getenv" in text:
                        names.update(pat.findall(text))
    return names


def env_inputs(ctx):
    if not ctx.program:
        return []
    out = []
    names = sorted((set(KNOWN_ENV) | discover_env_vars(ROOT)) - set(SWEEP_ENV) - NOT_PROGRAM_ENV)
    sweep_names = sorted(set(SWEEP_ENV) | {n for n in discover_env_vars(ROOT)
                                           if n.startswith("MEMPLACE_SWEEP_")})

    def make(d):
        write(os.path.join(d, "garbage"), b"\xff\xfe garbage {{{\n")
        os.makedirs(os.path.join(d, "work"), exist_ok=True)
        return {}

    def values_for(name):
        vals = PATH_VALUES if name in PATH_ENV else BAD_VALUES
        if ctx.quick:
            # NaN for every number, one path or garbage value for the rest.
            vals = [v for v in vals
                    if v in ("nan", "18446744073709551617", "{dir}/\udce9\udcff", "{dir}")]
        return vals

    for name in names:
        if name == "MEMPLACE":
            continue
        runs = []
        for i, v in enumerate(values_for(name)):
            runs.append(lookup_run("%s=%s" % (name, short(v)), {name: v}))
        out.append(Input("env", name, make, runs))
    modes = ["garbage", "AUTO", "auto ", "off ", "force:", "force:lookup.table=registers",
             "force:nosuch.x=shared", "force:lookup.table=shared,lookup.table=global",
             "force:" + "x" * 100000, "trace", "\udcff", "force:lookup.\udcff=shared"]
    runs = [lookup_run("MEMPLACE=%s" % short(v), {"MEMPLACE": v}) for v in ctx.pick(modes, 3)]
    runs.append(lookup_run("MEMPLACE=unset", {"MEMPLACE": None}))
    out.append(Input("env", "MEMPLACE", make, runs))
    runs = []
    for name in sweep_names:
        vals = (PATH_VALUES if name in PATH_ENV else BAD_VALUES)[:8]
        if ctx.quick:
            vals = ["{dir}/garbage"] if name == "MEMPLACE_SWEEP_COMPARE_SPEC" else []
        for v in vals:
            env = {"MEMPLACE": "sweep", "MEMPLACE_SWEEP_OUT": "{dir}/sweep.json",
                   "MEMPLACE_SWEEP_MAX": "8", name: v}
            runs.append(lookup_run("%s=%s" % (name, short(v)), env))
    out.append(Input("env", "MEMPLACE_SWEEP", make, runs))
    return out


def short(v):
    v = v.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return v if len(v) <= 24 else v[:12] + "...(%d)" % len(v)


# ---- aliasing ------------------------------------------------------------------------------

def alias_inputs(ctx):
    """The program's `alias` kernel: a parameter that points at a __device__ array the kernel
    writes by name, under the default Placer, every built-in spec, the dynamic dispatch, a
    tampered decision cache and MEMPLACE=trace (which must never apply a decision)."""
    if not ctx.program:
        return []
    specs = sorted(f[:-4] for f in os.listdir(os.path.join(ROOT, "specs")) if f.endswith(".msl"))
    runs = [Run("default", ["{prog}", "alias"], target="prog"),
            Run("trace-mode", ["{prog}", "alias"], env={"MEMPLACE": "trace"}, target="prog"),
            Run("dynamic", ["{prog}", "alias"], env={"MEMPLACE_DISPATCH": "dynamic"},
                target="prog")]
    for spec in ctx.pick(specs, 2):
        runs.append(Run("spec-" + spec, ["{prog}", "alias"], env={"MEMPLACE_SPEC": spec},
                        target="prog"))
    out = [Input("alias", "alias", lambda d: {}, runs)]
    if ctx.alias_cache_json is not None:
        def make(d):
            # Every place in the stored decisions made `shared`, as a tampered file would.
            os.makedirs(os.path.join(d, "cache"))
            write(os.path.join(d, "cache", ctx.cache_name),
                  ctx.alias_cache_json.replace(b'"global"', b'"shared"'))
            return {}
        out.append(Input("alias", "cache-tampered", make,
                         [Run("program", ["{prog}", "alias"], env={"MEMPLACE_CACHE": "{dir}/cache"},
                              target="prog")]))
    return out


# ---- decision cache -------------------------------------------------------------------------

def cache_inputs(ctx):
    if not ctx.program or ctx.cache_json is None:
        return []
    good = ctx.cache_json
    out = []
    j = json.loads(good)

    def mutate(fn):
        k = json.loads(good)
        fn(k)
        return json.dumps(k, indent=1).encode()

    variants = [
        ("truncated-half", good[:len(good) // 2]),
        ("truncated-1", good[:-2]),
        ("empty", b""),
        ("random-4KB", random.Random(9).randbytes(4096)),
        ("non-utf8-path", good.replace(j["binary"]["path"].encode(),
                                       j["binary"]["path"].encode() + b"\xe9\xff", 1)),
        ("non-utf8-everywhere", good.replace(b'"', b'"\xe9', 40)),
        ("version-999", mutate(lambda k: k.update(version=999))),
        ("version-string", mutate(lambda k: k.update(version="x"))),
        ("version-nan", good.replace(b'"version": %d' % j["version"], b'"version": NaN', 1)),
        ("format-wrong", mutate(lambda k: k.update(format="other"))),
        ("binary-size-string", mutate(lambda k: k["binary"].update(size="big"))),
        ("binary-missing", mutate(lambda k: k.pop("binary"))),
        ("array-root", b"[1, 2, 3]"),
        ("deep-nesting", b"[" * 100000 + b"]" * 100000),
        ("huge-number", good.replace(b'"version": %d' % j["version"],
                                     b'"version": 1' + b"0" * 400, 1)),
    ]
    # Tampered decisions: every string in the decisions replaced by a bad place or huge text.
    def tamper(k, value):
        def walk(x):
            if isinstance(x, dict):
                for key in list(x):
                    if key in ("format", "binary", "device", "version"):
                        continue
                    if isinstance(x[key], str):
                        x[key] = value
                    else:
                        walk(x[key])
            elif isinstance(x, list):
                for i, y in enumerate(x):
                    if isinstance(y, str):
                        x[i] = value
                    else:
                        walk(y)
        walk(k)
    variants += [("tampered-registers", mutate(lambda k: tamper(k, "registers"))),
                 ("tampered-shared", mutate(lambda k: tamper(k, "shared"))),
                 ("tampered-garbage", mutate(lambda k: tamper(k, "\u00e9" * 1000)))]

    def numbers(k, value):
        def walk(x):
            items = x.items() if isinstance(x, dict) else \
                enumerate(x) if isinstance(x, list) else []
            for key, y in list(items):
                if key in ("version", "size", "mtime"):
                    continue
                if isinstance(y, (int, float)) and not isinstance(y, bool):
                    x[key] = value
                else:
                    walk(y)
        walk(k)
    variants += [("numbers-negative", mutate(lambda k: numbers(k, -1))),
                 ("numbers-huge", mutate(lambda k: numbers(k, 1e308))),
                 ("numbers-2^64", mutate(lambda k: numbers(k, 2**64)))]
    for name, data in ctx.pick(variants, 6):
        def make(d, data=data):
            os.makedirs(os.path.join(d, "cache"))
            write(os.path.join(d, "cache", ctx.cache_name), data)
            return {}
        out.append(Input("cache", name, make,
                         [lookup_run("program", {"MEMPLACE_CACHE": "{dir}/cache"})]))
    # Not a regular file where the cache file goes.
    def special(kind):
        def make(d):
            os.makedirs(os.path.join(d, "cache"))
            p = os.path.join(d, "cache", ctx.cache_name)
            if kind == "dir":
                os.makedirs(p)
            elif kind == "symlink":
                write(os.path.join(d, "target.json"), good)
                os.symlink(os.path.join(d, "target.json"), p)
            elif kind == "symlink-devnull":
                os.symlink("/dev/null", p)
            elif kind == "fifo":
                os.mkfifo(p)
            return {"cachefile": p}
        return make
    # A FIFO where the cache file goes: reading it waits for a writer (full sweep only).
    for kind in ["dir", "symlink"] if ctx.quick else ["dir", "symlink", "symlink-devnull", "fifo"]:
        readers = ["{cachefile}"] if kind == "fifo" else []
        out.append(Input("cache", kind, special(kind),
                         [lookup_run("program", {"MEMPLACE_CACHE": "{dir}/cache"},
                                     watch=["{cachefile}"], fifo_readers=readers)]))
    out.append(Input("cache", "folder-is-file",
                     lambda d: {"f": write(os.path.join(d, "file"), b"x")},
                     [lookup_run("program", {"MEMPLACE_CACHE": "{f}"}, watch=["{f}"])]))
    return out


# ---- report and output paths ----------------------------------------------------------------

def make_special(d, kind, name="target"):
    """A path of the given kind inside d; returns (path, readers)."""
    p = os.path.join(d, name)
    if kind == "symlink-file":
        write(os.path.join(d, "real-file"), b"user data\n")
        os.symlink(os.path.join(d, "real-file"), p)
    elif kind == "symlink-devnull":
        os.symlink("/dev/null", p)
    elif kind == "symlink-dangling":
        os.symlink(os.path.join(d, "nowhere"), p)
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "devnode":
        try:
            os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a private /dev/null
        except OSError:
            os.symlink("/dev/null", p)
    elif kind == "directory":
        os.makedirs(p)
    elif kind == "readonly-dir":
        os.makedirs(os.path.join(d, "ro"))
        write(os.path.join(d, "ro", "target"), b"user data\n")
        os.chmod(os.path.join(d, "ro"), 0o555)
        p = os.path.join(d, "ro", "target")
    elif kind == "existing":
        write(p, b"user data\n")
    elif kind == "missing-dir":
        p = os.path.join(d, "missing", "target")
    return p


SPECIAL_KINDS = ["symlink-file", "symlink-devnull", "symlink-dangling", "fifo", "devnode",
                 "directory", "readonly-dir", "existing", "missing-dir"]


def path_inputs(ctx):
    out = []
    kinds = SPECIAL_KINDS
    if ctx.quick:
        kinds = ["symlink-file", "symlink-devnull", "symlink-dangling", "fifo", "devnode",
                 "directory", "existing"]
    for kind in kinds:
        def make(d, kind=kind):
            write(os.path.join(d, "saxpy.trace"), ctx.saxpy_small)
            write(os.path.join(d, "k.cu"), KERNEL % ("k", "a[i]"))
            p = make_special(d, kind)
            os.makedirs(os.path.join(d, "rw"))
            q = make_special(os.path.join(d, "rw"), "existing", "k.cu") if kind == "existing" \
                else make_special(os.path.join(d, "rw"), kind, "k.cu")
            return {"target": p, "rwfile": q}
        readers = ["{target}"] if kind == "fifo" else []
        # A regular file (or none) may be replaced by a command told to (--force, a report);
        # as root a read-only folder does not stop it.
        regular = ("existing", "missing-dir", "readonly-dir")
        rw_readers = ["{rwfile}"] if kind == "fifo" else []
        runs = [
            Run("convert-force", ["{memplace}", "trace", "convert", "saxpy.trace", "-o",
                                  "{target}", "--to", "binary", "--force"],
                watch=["{target}"] if kind not in regular else [],
                fifo_readers=readers),
            Run("convert", ["{memplace}", "trace", "convert", "saxpy.trace", "-o", "{target}",
                            "--to", "binary"], watch=["{target}"] if kind != "missing-dir" else [],
                fifo_readers=readers),
            Run("synth", ["{memplace}", "trace", "synth", "saxpy", "-o", "{target}"],
                watch=["{target}"] if kind != "missing-dir" else [], fifo_readers=readers),
            Run("rewrite", ["{memplace}", "rewrite", "k.cu", "-o", "{dir}/rw"],
                watch=["{rwfile}"], fifo_readers=rw_readers),
            Run("rewrite-force", ["{memplace}", "rewrite", "k.cu", "-o", "{dir}/rw", "--force"],
                watch=["{rwfile}"] if kind != "existing" else [], fifo_readers=rw_readers),
        ]
        if ctx.program:
            runs.append(lookup_run("program-report", {"MEMPLACE_REPORT": "{target}"},
                                   watch=["{target}"] if kind not in regular else [],
                                   fifo_readers=readers))
            runs.append(lookup_run("program-trace-dir", {"MEMPLACE_TRACE_DIR": "{target}"},
                                   watch=["{target}"] if kind not in regular else [],
                                   fifo_readers=readers))
        out.append(Input("paths", kind, make, runs))
    return out


# ---- numeric CLI options --------------------------------------------------------------------

def option_inputs(ctx):
    vals = ["nan", "inf", "-1", "0", "1e300", "18446744073709551617", "abc"]
    if ctx.quick:
        vals = ["nan", "-1"]

    def make(d):
        write(os.path.join(d, "saxpy.trace"), ctx.saxpy_small)
        return {}
    runs = []
    for v in vals:
        runs += [Run("place-top=" + v, ["{memplace}", "place", "saxpy.trace", "--spec", "h100",
                                        "--top", v], check_nan=True),
                 Run("place-sample=" + v, ["{memplace}", "place", "saxpy.trace", "--spec", "h100",
                                           "--sample", v], check_nan=True),
                 Run("eval-element-size=" + v, ["{memplace}", "spec", "eval", "h100", "--access",
                                                "stride:1", "--element-size", v], check_nan=True),
                 Run("eval-stride=" + v, ["{memplace}", "spec", "eval", "h100", "--access",
                                          "stride:" + v], check_nan=True),
                 Run("synth-traced-sms=" + v, ["{memplace}", "trace", "synth", "saxpy", "-o",
                                               "{dir}/s.trace", "--force", "--traced-sms", v]),
                 Run("synth-seed=" + v, ["{memplace}", "trace", "synth", "saxpy", "-o",
                                         "{dir}/s.trace", "--force", "--seed", v])]
    # Branch-and-bound on 20 arrays alike: nothing to prune.
    runs.append(Run("place-bnb-20-alike", ["{memplace}", "place", "{dir}/alike.trace", "--spec",
                                           "h100"]))
    def make_full(d):
        make(d)
        head = ["memplace-trace 1", "kernel k", "grid 264 1 1", "block 256 1 1"]
        arrays = ["array a%d elem=4 length=4096 mode=read" % i for i in range(20)]
        recs = ["r 0 0 %d a%d * %d..%d" % (i, i, 0, 31) for i in range(20)]
        write(os.path.join(d, "alike.trace"), text_trace(head + arrays + recs))
        return {}
    return [Input("options", "numbers", make_full, runs)]


# ---- running --------------------------------------------------------------------------------

def snapshot(path):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    snap = {"type": stat.S_IFMT(st.st_mode), "ino": st.st_ino, "dev": st.st_dev}
    if stat.S_ISLNK(st.st_mode):
        snap["link"] = os.readlink(path)
    elif stat.S_ISREG(st.st_mode) and st.st_size < (16 << 20):
        with open(path, "rb") as f:
            snap["data"] = zlib.crc32(f.read())
    elif stat.S_ISCHR(st.st_mode):
        snap["rdev"] = st.st_rdev
    return snap


def kind_name(t):
    return {stat.S_IFREG: "regular file", stat.S_IFDIR: "directory", stat.S_IFLNK: "symlink",
            stat.S_IFIFO: "FIFO", stat.S_IFCHR: "device", stat.S_IFSOCK: "socket"}.get(t, str(t))


def compare_snapshots(path, before, after):
    if before is None:
        return None
    if after is None:
        return "%s (%s) was removed" % (path, kind_name(before["type"]))
    if after["type"] != before["type"]:
        return "%s was a %s, is now a %s" % (path, kind_name(before["type"]),
                                            kind_name(after["type"]))
    if after["ino"] != before["ino"]:
        return "%s (%s) was replaced (new inode)" % (path, kind_name(before["type"]))
    if before.get("link") != after.get("link"):
        return "symlink %s now points at %s" % (path, after.get("link"))
    if before["type"] == stat.S_IFREG and before.get("data") != after.get("data"):
        return "%s: its content changed" % path
    return None


class FifoReader:
    """Opens a FIFO for reading (non-blocking) and drains it while the command runs, so that a
    writer that opens it does not block forever."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.stop.is_set():
            r, _, _ = select.select([self.fd], [], [], 0.1)
            if r:
                try:
                    if not os.read(self.fd, 1 << 16):
                        time.sleep(0.05)
                except BlockingIOError:
                    pass

    def close(self):
        self.stop.set()
        self.thread.join()
        os.close(self.fd)


def drain(stream, keep, sink):
    total = 0
    head = bytearray()
    while True:
        chunk = stream.read(1 << 16)
        if not chunk:
            break
        total += len(chunk)
        if len(head) < keep:
            head += chunk[:keep - len(head)]
    sink["total"] = total
    sink["head"] = bytes(head)


def limit_memory(limit):
    def fn():
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.nice(5)
    return fn


def expand(s, ph):
    if s is None:
        return None
    for k, v in ph.items():
        s = s.replace("{%s}" % k, v)
    return s


def run_one(ctx, inp, run, ph, d):
    args = ctx.args
    argv = [expand(a, ph) for a in run.argv]
    env = dict(os.environ)
    env.pop("MEMPLACE", None)
    for k in list(env):
        if k.startswith("MEMPLACE_"):
            del env[k]
    # No decision cache unless the case names one (on by default: a case would find what an
    # earlier case decided).
    env["MEMPLACE_CACHE"] = "off"
    env_shown = {}
    for k, v in run.env.items():
        v = expand(v, ph)
        env_shown[k] = v
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    watch = [expand(w, ph) for w in run.watch]
    before = {w: snapshot(w) for w in watch}
    readers = []
    for f in run.fifo_readers:
        try:
            readers.append(FifoReader(expand(f, ph)))
        except OSError:
            pass
    t0 = time.time()
    timed_out = False
    out, err = {}, {}
    try:
        p = subprocess.Popen(argv, cwd=d, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=limit_memory(int(args.mem_gb * (1 << 30))),
                             start_new_session=True)
        t1 = threading.Thread(target=drain, args=(p.stdout, 1 << 20, out))
        t2 = threading.Thread(target=drain, args=(p.stderr, 1 << 16, err))
        t1.start()
        t2.start()
        try:
            p.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        t1.join()
        t2.join()
        rc = p.returncode
    finally:
        for r in readers:
            r.close()
    secs = time.time() - t0
    after = {w: snapshot(w) for w in watch}
    stdout = out.get("head", b"").decode("utf-8", "replace")
    stderr = err.get("head", b"").decode("utf-8", "replace")
    problems = []
    if timed_out:
        problems.append(("HANG", "no answer in %d s" % args.timeout))
    oom = re.search(r"bad_alloc|Cannot allocate memory|out of memory|std::length_error|MemoryError",
                    stderr)
    if not timed_out:
        if oom:
            problems.append(("OOM", "memory limit reached: %s%s" %
                             (oom.group(0), "" if rc else " (caught; the command went on)")))
        sanitizer = re.search(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|"
                              r"terminate called|uncaught exception|Traceback \(most recent",
                              stderr)
        if rc < 0 and not oom:
            problems.append(("CRASH", "killed by %s" % signal.Signals(-rc).name))
        elif rc > 2 and not oom:
            problems.append(("CRASH", "exit code %d" % rc))
        if sanitizer and not oom:
            problems.append(("CRASH", sanitizer.group(0)))
    for w in watch:
        why = compare_snapshots(w, before[w], after[w])
        if why:
            problems.append(("REPLACED", why))
    if not timed_out and not problems:
        if run.target == "prog":
            got = [l for l in stdout.splitlines() if l.startswith("RESULT ")]
            if rc != 0:
                problems.append(("WRONG", "the program exited %d (no fallback)" % rc))
            else:
                ref = reference(ctx, argv)
                if got != ref and got != off_reference(ctx, argv, env, d):
                    diff = [l for l in got if l not in ref][:3]
                    problems.append(("WRONG", "results differ from MEMPLACE=off: %s" %
                                     (diff or "%d of %d lines" % (len(got), len(ref)))))
        else:
            if rc != 0 and not stderr.strip() and not stdout.strip():
                problems.append(("WRONG", "exit %d without a message" % rc))
            if run.check_nan and rc == 0 and re.search(r"(?<![A-Za-z_])-?(nan|inf)(?![A-Za-z_])",
                                                       stdout, re.I):
                problems.append(("WRONG", "NaN or inf in the output"))
    if not timed_out and re.search(r"(cannot|could not|failed)[^\n]*: Success\b", stderr):
        problems.append(("WRONG", "an error message that says 'Success' (errno overwritten)"))
    if err.get("total", 0) > args.max_stderr:
        problems.append(("NOISY", "%d bytes on stderr" % err["total"]))
    env_prefix = " ".join("%s=%s" % (k, shlex.quote(v)) if v is not None else "-u " + k
                          for k, v in env_shown.items())
    cmd = "cd %s && %s%s" % (shlex.quote(d), "env " + env_prefix + " " if env_prefix else "",
                             " ".join(shlex.quote(a) for a in argv))
    cmd = cmd.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if len(cmd) > 2000:
        cmd = cmd[:2000] + "...(%d characters)" % len(cmd)
    return {"id": "%s/%s" % (inp.id, run.name), "group": inp.group, "input": inp.name,
            "run": run.name, "target": run.target,
            "category": problems[0][0] if problems else "ok",
            "problems": [{"category": c, "detail": why} for c, why in problems],
            "rc": rc, "seconds": round(secs, 2), "stdout_bytes": out.get("total", 0),
            "stderr_bytes": err.get("total", 0), "stderr_head": stderr[:2000],
            "command": cmd}


def reference(ctx, argv):
    """The program's results under MEMPLACE=off and no other variable, per argument list."""
    key = tuple(argv[1:])
    with ctx.lock:
        if key not in ctx.references:
            env = {k: v for k, v in os.environ.items() if not k.startswith("MEMPLACE")}
            ctx.references[key] = off_reference(ctx, argv, env, ctx.args.out)
        return ctx.references[key]


def off_reference(ctx, argv, env, d):
    """The program's results under MEMPLACE=off with the same other variables: under emulation
    some choose the emulated device (MEMPLACE_SPEC) or how it runs (MEMPLACE_EMU_*)."""
    try:
        r = subprocess.run(argv, cwd=d, env=dict(env, MEMPLACE="off"), capture_output=True,
                           timeout=ctx.args.timeout,
                           preexec_fn=limit_memory(int(ctx.args.mem_gb * (1 << 30))))
    except subprocess.TimeoutExpired:
        return None
    return [l for l in r.stdout.decode("utf-8", "replace").splitlines()
            if l.startswith("RESULT ")]


def safe_dirname(name):
    return re.sub(r"[^A-Za-z0-9_.=+-]", "_", name)[:80]


def run_input(ctx, inp, index):
    d = os.path.join(ctx.cases_dir, "%04d-%s" % (index, safe_dirname(inp.id)))
    os.makedirs(d)
    results = []
    try:
        # Every command gets a fresh copy of the input (a command may replace a file).
        for k, run in enumerate(inp.runs):
            rd = os.path.join(d, str(k))
            os.makedirs(rd)
            ph = {"dir": rd, "memplace": ctx.memplace, "prog": ctx.program or "",
                  "saxpy_text": ctx.saxpy_path}
            ph.update(inp.make(rd) or {})
            results.append(run_one(ctx, inp, run, ph, rd))
    except Exception as exc:  # noqa: BLE001 - a defect of the sweep itself, reported as such
        results.append({"id": inp.id + "/setup", "group": inp.group, "input": inp.name,
                        "run": "setup", "target": "sweep", "category": "CRASH",
                        "problems": [{"category": "CRASH", "detail": "the sweep failed: %r" % exc}],
                        "rc": None, "seconds": 0, "stdout_bytes": 0, "stderr_bytes": 0,
                        "stderr_head": "", "command": ""})
    if all(r["category"] == "ok" for r in results) and not ctx.args.keep:
        shutil.rmtree(d, onerror=lambda f, p, e: (os.chmod(os.path.dirname(p), 0o755), f(p)))
    return results


# ---- setup: the base trace, the program, the reference and the cache -------------------------

def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def build_program(args, work):
    """Rewrites sweep_program.cu with `memplace rewrite` and links it with the Placer for the
    CPU emulation layer (as memplace_add_cuda_sources does with BACKEND EMU)."""
    lib = os.path.join(args.build, "lib")
    rw = os.path.join(work, "program")
    os.makedirs(rw, exist_ok=True)
    r = sh([args.memplace, "rewrite", os.path.join(HERE, "sweep_program.cu"), "-o", rw, "--force"])
    if r.returncode != 0:
        raise SystemExit("cannot rewrite sweep_program.cu:\n" + r.stdout + r.stderr)
    libs = ["memplace_placer_emu", "memplace_runtime_emu", "memplace_search", "memplace_model",
            "memplace_trace", "memplace_spec", "memplace_common", "memplace_runtime_core"]
    paths = [os.path.join(lib, "lib%s.a" % l) for l in libs]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise SystemExit("not built: %s" % ", ".join(missing))
    prog = os.path.join(work, "sweep_program")
    cmd = [args.emu_cxx, "-O1", "-w", "-I" + ROOT, "-I" + os.path.join(ROOT, "runtime", "include"),
           os.path.join(rw, "sweep_program.cu"), "-Wl,--undefined=memplace_placer_autoinstall",
           "-Wl,--start-group"] + ["-Wl," + p for p in paths] + ["-Wl,--end-group", "-o", prog]
    r = sh(cmd)
    if r.returncode != 0:
        raise SystemExit("cannot build the sweep program:\n%s\n%s" % (" ".join(cmd),
                                                                      r.stderr[-4000:]))
    return prog


def setup(ctx):
    args = ctx.args
    work = os.path.join(args.out, "setup")
    os.makedirs(work, exist_ok=True)
    ctx.memplace = args.memplace
    with open(os.path.join(ROOT, "examples", "traces", "saxpy.trace"), encoding="utf-8") as f:
        ctx.saxpy_small = "\n".join(f.read().splitlines()[:400]) + "\n"
    ctx.saxpy_path = write(os.path.join(work, "saxpy.trace"), ctx.saxpy_small)
    ctx.program = None
    ctx.cache_json = None
    ctx.alias_cache_json = None
    if args.no_program:
        return
    ctx.program = args.program or build_program(args, work)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMPLACE")}
    r = sh([ctx.program], env=dict(env, MEMPLACE="off"), timeout=300)
    if r.returncode != 0 or len([l for l in r.stdout.splitlines() if l.startswith("RESULT ")]) != 7:
        raise SystemExit("the sweep program fails under MEMPLACE=off:\n" + r.stdout + r.stderr)
    # Decision-cache files to corrupt: the lookup kernel's and the alias kernel's.
    for which in ("lookup", "alias"):
        cache = os.path.join(work, "cache-" + which)
        shutil.rmtree(cache, ignore_errors=True)
        sh([ctx.program, which], env=dict(env, MEMPLACE_CACHE=cache, MEMPLACE_QUIET="1"),
           timeout=300)
        files = sorted(f for f in os.listdir(cache) if f.endswith(".json")) \
            if os.path.isdir(cache) else []
        if not files:
            log("no decision cache file was written (MEMPLACE_CACHE=%s): its cases are skipped"
                % cache)
            continue
        ctx.cache_name = files[0]
        with open(os.path.join(cache, files[0]), "rb") as f:
            setattr(ctx, "cache_json" if which == "lookup" else "alias_cache_json", f.read())


def self_test(args):
    """Checks the classifier on commands whose outcome is known (no memplace needed): a check
    that cannot fail would let the sweep pass on broken code."""
    args.timeout, args.mem_gb, args.max_stderr = 2, 1, 1 << 20
    ctx = Ctx(args)
    ctx.memplace, ctx.program, ctx.saxpy_path = "/bin/true", "/bin/sh", ""
    prog_sh = '[ "$MEMPLACE" = off ] && echo "RESULT a" || echo "RESULT %s"'
    ctx.references[("-c", prog_sh % "a")] = ["RESULT a"]
    ctx.references[("-c", prog_sh % "b")] = ["RESULT a"]

    def link(d):
        write(os.path.join(d, "real"), b"user data\n")
        os.symlink(os.path.join(d, "real"), os.path.join(d, "target"))
        return {"target": os.path.join(d, "target")}

    def sh_run(name, script, **kw):
        return Run(name, ["/bin/sh", "-c", script], **kw)
    expect = [
        ("ok", sh_run("exit-0", "exit 0"), None),
        ("ok", sh_run("exit-2-message", "echo 'x.msl:1:2: error: bad' >&2; exit 2"), None),
        ("WRONG", sh_run("exit-1-silent", "exit 1"), None),
        ("CRASH", sh_run("segv", "kill -SEGV $$"), None),
        ("CRASH", sh_run("exit-3", "echo bad >&2; exit 3"), None),
        ("CRASH", sh_run("uncaught", "echo 'terminate called after throwing' >&2; exit 1"), None),
        ("HANG", sh_run("sleep", "sleep 30"), None),
        ("OOM", Run("allocate", [sys.executable, "-c", "b = bytearray(2 << 30)"]), None),
        ("NOISY", sh_run("noisy", "head -c 2000000 /dev/zero | tr '\\0' x >&2"), None),
        ("WRONG", sh_run("nan", "echo 'predicted: -nan us'", check_nan=True), None),
        ("WRONG", sh_run("success", "echo 'error: x: cannot rename into place: Success' >&2;"
                                    " exit 2"), None),
        ("REPLACED", sh_run("rename-over-symlink", "echo x > t.tmp && mv t.tmp target",
                            watch=["{target}"]), link),
        ("ok", sh_run("write-through-symlink", "echo x > target", watch=["{target}"]), link),
        ("ok", Run("program-same", ["{prog}", "-c", prog_sh % "a"], target="prog"), None),
        ("WRONG", Run("program-differs", ["{prog}", "-c", prog_sh % "b"], target="prog"), None),
        ("WRONG", Run("program-fails", ["{prog}", "-c", "exit 1"], target="prog"), None),
    ]
    ctx.cases_dir = os.path.join(args.out, "self-test")
    shutil.rmtree(ctx.cases_dir, ignore_errors=True)
    os.makedirs(ctx.cases_dir)
    bad = 0
    for k, (want, run, make) in enumerate(expect):
        inp = Input("self-test", run.name, make or (lambda d: {}), [run])
        got = run_input(ctx, inp, k)[0]
        ok = got["category"] == want
        bad += 0 if ok else 1
        why = "; ".join(p["detail"] for p in got["problems"])
        print("%s %-24s expected %-8s got %-8s %s" % ("ok  " if ok else "FAIL", run.name, want,
                                                     got["category"], why))
    print("self-test: %d of %d as expected" % (len(expect) - bad, len(expect)))
    return 1 if bad else 0


def uses_sanitizer(path):
    with open(path, "rb") as f:
        data = f.read()
    return b"__asan_init" in data or b"__tsan_init" in data or b"__msan_init" in data


def log(msg):
    print(msg, file=sys.stderr, flush=True)


GENERATORS = {"alias": alias_inputs, "spec": spec_inputs, "trace": trace_inputs,
              "source": source_inputs,
              "env": env_inputs, "cache": cache_inputs, "paths": path_inputs,
              "options": option_inputs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="the build folder (bin/memplace, bin/memplace-emu-c++, lib/)")
    ap.add_argument("--memplace", help="the memplace binary (default BUILD/bin/memplace)")
    ap.add_argument("--emu-cxx", help="the emulation compiler (default BUILD/bin/memplace-emu-c++)")
    ap.add_argument("--program", help="a prebuilt sweep program (default: rewrite and build "
                                      "tests/hardening/sweep_program.cu into OUT/setup)")
    ap.add_argument("--no-program", action="store_true", help="CLI cases only")
    ap.add_argument("--out", default="sweep-out", help="results.json and kept cases go here")
    ap.add_argument("--quick", action="store_true", help="a representative subset (minutes)")
    ap.add_argument("--groups", help="comma-separated: " + ",".join(GENERATORS))
    ap.add_argument("--match", help="only cases whose id contains this text")
    ap.add_argument("--jobs", type=int, default=1, help="inputs run at once (default 1)")
    ap.add_argument("--timeout", type=float, help="seconds per command (default 60, quick 20)")
    ap.add_argument("--mem-gb", type=float, default=4.0,
                    help="address-space limit per command, GB (0: none; sanitizer builds)")
    ap.add_argument("--max-stderr", type=int, default=1 << 20, help="NOISY above this (bytes)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the folders of passing cases too")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--self-test", action="store_true",
                    help="check the classifier on commands with known outcomes, and exit")
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)
    if args.self_test:
        return self_test(args)
    args.build = os.path.abspath(args.build)
    args.memplace = os.path.abspath(args.memplace or os.path.join(args.build, "bin", "memplace"))
    args.emu_cxx = args.emu_cxx or os.path.join(args.build, "bin", "memplace-emu-c++")
    args.out = os.path.abspath(args.out)
    if args.timeout is None:
        args.timeout = 20 if args.quick else 60
    if not os.access(args.memplace, os.X_OK):
        raise SystemExit("no memplace binary at %s (give --build or --memplace)" % args.memplace)
    if args.mem_gb and uses_sanitizer(args.memplace):
        # A sanitizer reserves terabytes of address space: RLIMIT_AS would stop it at start.
        log("%s is built with a sanitizer: no address-space limit" % args.memplace)
        args.mem_gb = 0
    ctx = Ctx(args)
    groups = args.groups.split(",") if args.groups else list(GENERATORS)
    needs_program = not args.list and any(g in groups
                                          for g in ("alias", "env", "cache", "paths", "spec"))
    if not needs_program:
        args.no_program = True
    os.makedirs(args.out, exist_ok=True)
    ctx.cases_dir = os.path.join(args.out, "cases")
    shutil.rmtree(ctx.cases_dir, ignore_errors=True)
    os.makedirs(ctx.cases_dir)
    t0 = time.time()
    if args.list:
        ctx.program, ctx.cache_json = "PROGRAM", b'{"binary": {"path": "p"}, "version": 1}'
        ctx.alias_cache_json = ctx.cache_json
        ctx.cache_name = "c.json"
    else:
        setup(ctx)
        log("setup: %.0f s (program: %s)" % (time.time() - t0, ctx.program or "none"))
    inputs = []
    for g in groups:
        inputs += GENERATORS[g](ctx)
    if args.match:
        inputs = [i for i in inputs
                  if args.match in i.id or any(args.match in r.name for r in i.runs)]
    if args.list:
        for i in inputs:
            for r in i.runs:
                print("%s/%s" % (i.id, r.name))
        return 0
    total_runs = sum(len(i.runs) for i in inputs)
    log("%d inputs, %d commands, %d at once, %g s and %g GB each" %
        (len(inputs), total_runs, args.jobs, args.timeout, args.mem_gb))
    results = []
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = [ex.submit(run_input, ctx, inp, k) for k, inp in enumerate(inputs)]
        for f in concurrent.futures.as_completed(futs):
            rs = f.result()
            results += rs
            done += len(rs)
            for r in rs:
                if r["category"] != "ok":
                    log("[%d/%d] %-8s %s (%s)" % (done, total_runs, r["category"], r["id"],
                                                  r["problems"][0]["detail"][:120]))
    results.sort(key=lambda r: r["id"])
    report(ctx, results, time.time() - t0)
    return 1 if any(r["category"] != "ok" for r in results) else 0


def report(ctx, results, secs):
    args = ctx.args
    groups = sorted({r["group"] for r in results})
    cats = ["ok"] + CATEGORIES
    width = max(8, max(len(g) for g in groups) if groups else 8)
    print("\nbad-input sweep (%s): %d commands in %.0f s; build %s" %
          ("quick" if args.quick else "full", len(results), secs, args.build))
    print("%-*s %6s" % (width, "group", "cases") + "".join(" %8s" % c for c in cats))
    for g in groups + ["total"]:
        rs = results if g == "total" else [r for r in results if r["group"] == g]
        print("%-*s %6d" % (width, g, len(rs)) +
              "".join(" %8d" % sum(1 for r in rs if r["category"] == c) for c in cats))
    failures = [r for r in results if r["category"] != "ok"]
    if failures:
        print("\nfailures (inputs kept under %s):" % ctx.cases_dir)
        for r in failures:
            print("\n%s %s: %s" % (r["category"], r["id"],
                                   "; ".join(p["detail"] for p in r["problems"])[:300]))
            print("  $ " + r["command"])
            head = [l for l in r["stderr_head"].splitlines() if l.strip()][:3]
            for l in head:
                print("  | " + l[:200])
    path = os.path.join(args.out, "results.json")
    with open(path, "w") as f:
        json.dump({"mode": "quick" if args.quick else "full", "build": args.build,
                   "memplace": args.memplace, "program": ctx.program, "seconds": round(secs),
                   "counts": {c: sum(1 for r in results if r["category"] == c) for c in cats},
                   "results": results}, f, indent=1)
    print("\n%d failed of %d; results: %s" % (len(failures), len(results), path))


if __name__ == "__main__":
    sys.exit(main())
