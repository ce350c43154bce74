#!/usr/bin/env bash
# ctest demo_emu: the bundled example under the CPU emulation layer, as `make demo` runs it.
#   demo_test.sh MEMPLACE_DEMO MEMPLACE_DEMO_ORIGINAL OUTDIR
# Both programs check their results against the CPU reference and their concurrent launches
# (2 host threads x 2 streams) bitwise against the single-stream run; the table script checks
# that the memplace program's outputs are bitwise the original program's, input by input. Then:
# every signature traced once and decided, and a second run with MEMPLACE_CACHE takes every
# decision from the cache without tracing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
demo="$1"
orig="$2"
out="$3"
mkdir -p "$out"
rm -rf "$out"/*
export MEMPLACE_QUIET=1
unset MEMPLACE MEMPLACE_TIME MEMPLACE_SPEC || true
"$orig" >"$out/original.txt"
MEMPLACE_REPORT="$out/report.json" MEMPLACE_CACHE="$out/cache" "$demo" >"$out/memplace.txt"
python3 "$here/report_table.py" --report "$out/report.json" --run "$out/memplace.txt" \
  --original "$out/original.txt"
python3 - "$out/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ks = r["kernels"]
assert len(ks) == 5, "expected 5 signatures (3 SpMV inputs, 2 particle counts), got %d" % len(ks)
for k in ks:
    sig = k["signature"]["text"]
    assert k["status"] in ("placed", "original"), (sig, k["status"], k.get("failure"))
    assert 1 <= k["launches"]["traced"] == k["trace"]["attempts"], (sig, k["launches"], k["trace"])
    assert k["source"] == "trace", (sig, k["source"])
    if k["status"] == "placed":
        assert k["launches"]["placed"] >= 1, (sig, k["launches"])
        assert k["dispatch"] in ("specialized", "dynamic"), (sig, k["dispatch"])
    assert k["predicted"]["decision_us"] > 0 and k["predicted"]["original_us"] > 0, sig
print("report: %d signatures, each traced (once, or again after an overflow); %d placed" %
      (len(ks), sum(k["status"] == "placed" for k in ks)))
PY
# The decisions persist: a second run reads them and traces nothing.
MEMPLACE_REPORT="$out/report2.json" MEMPLACE_CACHE="$out/cache" "$demo" --threads 0 >"$out/memplace2.txt"
python3 - "$out/report.json" "$out/report2.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["kernels"]
b = json.load(open(sys.argv[2]))["kernels"]
assert len(a) == len(b)
for x, y in zip(a, b):
    assert y["source"] == "cache" and y["launches"]["traced"] == 0, (y["signature"]["text"], y["source"])
    assert x["decision"] == y["decision"], (x["decision"], y["decision"])
print("cache: the second run took all %d decisions from the cache, none traced" % len(b))
PY
grep -q "^demo: PASS" "$out/memplace2.txt"
