#!/usr/bin/env bash
# auto_install_test.sh PROGRAM OUTDIR: runs a rewritten program that only links the Placer, with
# MEMPLACE unset and MEMPLACE_REPORT set, and checks the report it writes at exit; then with
# MEMPLACE=off, where the program must see no tracing (and fails its own check).
set -euo pipefail
prog="$1"
out="$2"
mkdir -p "$out"
rm -f "$out/report.json"
unset MEMPLACE || true
MEMPLACE_QUIET=1 MEMPLACE_REPORT="$out/report.json" "$prog"
test -s "$out/report.json" || { echo "no report written at exit"; exit 1; }
grep -q '"format": "memplace-placer-report"' "$out/report.json"
grep -q '"status": "placed"' "$out/report.json"
grep -q '"table": "shared"' "$out/report.json"
grep -q '"traced": 1' "$out/report.json"
# The process's own times (docs/placer.md, "What the first run costs"), the exit's store included.
grep -q '"process_ms"' "$out/report.json"
grep -Eq '"exit_store": [0-9]' "$out/report.json"
grep -Eq '"trace_setup": [0-9]' "$out/report.json"
echo "report: $(grep -c '"kernel":' "$out/report.json") kernel(s), table placed in shared memory"
# MEMPLACE=off: the Placer does not install; the program's own check fails (its 2nd launch untraced).
if MEMPLACE=off MEMPLACE_QUIET=1 "$prog" >"$out/off.log" 2>&1; then
  echo "MEMPLACE=off: the Placer still placed launches"; exit 1
fi
grep -q "was not traced" "$out/off.log"
echo "MEMPLACE=off: not installed"
