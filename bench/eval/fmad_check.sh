#!/usr/bin/env bash
# Is a placement's last-bit difference multiply-add contraction? Runs one program's sweep with
# contraction off everywhere: nvcc -fmad=false for the rewritten program and the original,
# MEMPLACE_JIT_OPTIONS=--fmad=false for the just-in-time instantiations (decision 020,
# docs/rewriting.md "Floating point"). On the GPU machine:
#   bench/eval/fmad_check.sh CARRY PROGRAM OUT      CARRY: bench/eval/prepare.py's folder
# Prints the placements measured per input and dispatch, equal or not to the original's.
set -uo pipefail
carry="$(cd "${1:?usage: fmad_check.sh CARRY PROGRAM OUT}" && pwd)"
prog="${2:?program}"
out="$(mkdir -p "${3:?out}" && cd "$3" && pwd)"
tmp="$(mktemp -d)"
cp -r "$carry" "$tmp/carry"
python3 - "$tmp/carry/eval/cases.json" "$prog" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["programs"] = [sys.argv[2]]
m["cases"] = [c for c in m["cases"] if c["program"] == sys.argv[2]]
json.dump(m, open(sys.argv[1], "w"))
PY
printf '#!/bin/sh\nexec nvcc -fmad=false "$@"\n' >"$tmp/nvcc"
chmod +x "$tmp/nvcc"
NVCC="$tmp/nvcc" MEMPLACE_JIT_OPTIONS=--fmad=false EVAL_WORK="$tmp/work" \
  bash "$tmp/carry/eval/evaluate.sh" "$tmp/carry" "$out" >"$out/fmad_check.log" 2>&1
python3 - "$out/placements.csv" <<'PY'
import csv, sys
from collections import Counter
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok"]
for (inp, disp, eq), n in sorted(Counter((r["input"], r["dispatch"], r["equal"] == "1")
                                         for r in rows).items()):
    print("%-12s %-12s %-8s %d" % (inp, disp, "equal" if eq else "DIFFERS", n))
PY
rm -rf "$tmp"
