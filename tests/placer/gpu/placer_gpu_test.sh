#!/usr/bin/env bash
# The Placer on a GPU (ctest gpu_placer of the GPU suite, tests/gpu): the benchmark (original,
# first launch, later launches, overheads, dynamic accessor; outputs bitwise; two threads on two
# streams), a rewritten program that only links the Placer (MEMPLACE_TIME=1 report; on-line
# tuning; decision cache over two runs and a corrupt entry; MEMPLACE=trace; MEMPLACE=off), and
# compute-sanitizer memcheck over it. (The aliasing and shadow-launch programs are their own
# tests: gpu_placer_alias, gpu_placer_shadow.)
#   placer_gpu_test.sh BIN OUT    BIN: placer_bench and placer_auto_program; OUT: results
#                                 (bench.md, *.json, *.log). Exit 0 when everything passed.
set -uo pipefail
bin="${1:?usage: placer_gpu_test.sh BIN OUT}"
out="${2:?usage: placer_gpu_test.sh BIN OUT}"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
say() { echo "== $*" | tee -a "$log"; }
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

say "compute-sanitizer memcheck over the auto program (traced, original and placed launches)"
MEMPLACE_TIME=1 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
  "$bin/placer_auto_program" 6 65536 >"$out/memcheck.log" 2>&1
rc=$?; tail -3 "$out/memcheck.log" | tee -a "$log"
[[ $rc -eq 0 ]] || { echo "memcheck: exit $rc" | tee -a "$log"; status=1; }

say "overall: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
