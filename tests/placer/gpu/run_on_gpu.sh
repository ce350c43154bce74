#!/usr/bin/env bash
# The Placer's GPU run in one command, for the device machine: the benchmark (original, first
# launch, later launches, overheads, dynamic accessor; outputs bitwise; two threads on two
# streams), a rewritten program that only links the Placer (MEMPLACE_TIME=1 report; decision
# cache over two runs; MEMPLACE=trace; MEMPLACE=off), compute-sanitizer memcheck over it, and
# the runtime's own GPU tests (the runtime gained timing and attributes for the Placer).
# BIN: the Placer's programs (tests/placer/gpu/build.sh), RT_BIN: tests/runtime/build.sh's,
# OUT: results (bench.md, *.json, *.log). Exit 0 when everything passed.
set -uo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
bin="${BIN:-$root/build-gpu/placer}"
rt="${RT_BIN:-$root/build-gpu/runtime}"
out="${OUT:-$root/build-gpu/placer-results}"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
say() { echo "== $*" | tee -a "$log"; }
if ! nvidia-smi >/dev/null 2>&1; then
  echo "SKIP: no GPU"
  exit 77
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$out/device.txt"
date -u +"date: %Y-%m-%d %H:%M UTC" | tee -a "$out/device.txt"
status=0
export MEMPLACE_QUIET=1

say "benchmark"
"$bin/placer_bench" "$out/bench.md" 2>&1 | tee -a "$log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "bench failed" | tee -a "$log"; status=1; }

say "auto-installed Placer, MEMPLACE_TIME=1, 12 launches of a 4M-thread lookup"
MEMPLACE_TIME=1 MEMPLACE_REPORT="$out/auto_timed.json" "$bin/placer_auto_program" 12 4194304 2>&1 | tee -a "$log"
[[ ${PIPESTATUS[0]} -eq 0 && -s "$out/auto_timed.json" ]] || { echo "auto (timed) failed" | tee -a "$log"; status=1; }

say "on-line tuning (MEMPLACE_TUNE=3, MEMPLACE_TUNE_EXPLORE=2): 30 launches, the shortlist measured, one kept"
MEMPLACE_TUNE=3 MEMPLACE_TUNE_EXPLORE=2 MEMPLACE_REPORT="$out/auto_tuned.json" "$bin/placer_auto_program" 30 4194304 >"$out/auto_tuned.log" 2>&1
rc=$?
python3 - "$out/auto_tuned.json" <<'PY' | tee -a "$log"
import json, sys
k = json.load(open(sys.argv[1]))["kernels"][0]
t = k["tuning"]
print("tuning:", t["state"], "|", t["why"], "|", len(t["candidates"]), "candidates,",
      t["launches"], "launches | applied", k["applied"])
sys.exit(0 if t["state"] == "done" and t["candidates"] and t["launches"] >= 3 else 1)
PY
[[ $rc -eq 0 && ${PIPESTATUS[0]} -eq 0 ]] && ! grep -q DIFFERS "$out/auto_tuned.log" \
  || { echo "tuning check failed" | tee -a "$log"; tail -25 "$out/auto_tuned.log" | tee -a "$log"; status=1; }

say "decision cache: two runs"
rm -rf "$out/cache"
MEMPLACE_CACHE="$out/cache" MEMPLACE_REPORT="$out/cache_run1.json" "$bin/placer_auto_program" 3 1048576 2>&1 | tee -a "$log"
rc1=${PIPESTATUS[0]}
MEMPLACE_CACHE="$out/cache" MEMPLACE_REPORT="$out/cache_run2.json" "$bin/placer_auto_program" 3 1048576 2>&1 | tee -a "$log"
rc2=${PIPESTATUS[0]}
grep -q '"source": "cache"' "$out/cache_run2.json" && [[ $rc1 -eq 0 && $rc2 -eq 0 ]] \
  && echo "cache: second run placed from the cache" | tee -a "$log" \
  || { echo "cache check failed" | tee -a "$log"; status=1; }
echo "{not json" > "$(ls "$out"/cache/*.json | head -1)"
MEMPLACE_QUIET=0 MEMPLACE_CACHE="$out/cache" "$bin/placer_auto_program" 2 1048576 >"$out/cache_corrupt.log" 2>&1
grep -q "corrupt" "$out/cache_corrupt.log" && grep -q "launch 2: tracing" "$out/cache_corrupt.log" \
  && echo "cache: a corrupt file is ignored with a warning" | tee -a "$log" \
  || { echo "corrupt-cache check failed" | tee -a "$log"; cat "$out/cache_corrupt.log"; status=1; }

say "MEMPLACE=trace and MEMPLACE=off"
MEMPLACE=trace MEMPLACE_REPORT="$out/trace_mode.json" "$bin/placer_auto_program" 3 1048576 >"$out/trace_mode.log" 2>&1
grep -q '"status": "observed"' "$out/trace_mode.json" && [[ $(grep -c "tracing" "$out/trace_mode.log") -eq 3 ]] \
  && echo "trace mode: 3 traced launches, placement unchanged" | tee -a "$log" \
  || { echo "trace mode check failed" | tee -a "$log"; cat "$out/trace_mode.log"; status=1; }
MEMPLACE=off "$bin/placer_auto_program" 2 1048576 >"$out/off.log" 2>&1
grep -q "was not traced" "$out/off.log" && echo "off: not installed" | tee -a "$log" \
  || { echo "off check failed" | tee -a "$log"; status=1; }

say "aliasing: the rewritten aliasing program (auto, cache, sweep, forced places) bitwise against MEMPLACE=off"
(unset MEMPLACE_QUIET; "$root/tests/placer/alias_test.sh" "$bin/placer_alias_program" "$out/alias") 2>&1 | tee -a "$log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "aliasing failed" | tee -a "$log"; status=1; }

say "shadow launches: the rewritten shadow_trace program (auto cold and warm, trace) bitwise against MEMPLACE=off, the race reported"
(unset MEMPLACE_QUIET; "$root/tests/placer/shadow_test.sh" "$bin/placer_shadow_program" "$out/shadow") 2>&1 | tee -a "$log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "shadow launches failed" | tee -a "$log"; status=1; }

say "compute-sanitizer memcheck over the auto program (traced, original and placed launches)"
MEMPLACE_TIME=1 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
  "$bin/placer_auto_program" 6 65536 >"$out/memcheck.log" 2>&1
rc=$?; tail -3 "$out/memcheck.log" | tee -a "$log"
[[ $rc -eq 0 ]] || { echo "memcheck: exit $rc" | tee -a "$log"; status=1; }

if [[ -x "$rt/runtime_gpu_tests" ]]; then
  say "runtime GPU tests"
  "$rt/runtime_gpu_tests" "$out/runtime_tests.md" >"$out/runtime_tests.log" 2>&1
  rc=$?; tail -2 "$out/runtime_tests.log" | tee -a "$log"
  [[ $rc -eq 0 ]] || { echo "runtime tests: exit $rc" | tee -a "$log"; status=1; }
fi
say "overall: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
