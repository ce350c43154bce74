#!/usr/bin/env bash
# The demo on a GPU (ctest gpu_demo of the GPU suite, tests/gpu): the program as written and
# through memplace, both built by examples/demo/CMakeLists.txt with the CUDA backend, run on
# GPU-sized inputs (the memplace one with MEMPLACE_TIME=1 and MEMPLACE_REPORT; both run every
# input, then two host threads on two streams each, every output checked against the CPU
# reference and bitwise against the single-stream run), then once more without MEMPLACE_TIME,
# and the tables: decisions, predicted and measured benefit, end-to-end speedup including
# memplace's overhead, and first-launch vs later-launch overhead against kernel time.
#   run_on_gpu.sh BIN OUT     BIN: memplace_demo and memplace_demo_original; OUT: results
# Environment: REPS (launches per input, default 20), THREADS / STREAMS (default 2 / 2).
# Exit 0 when everything passed, 77 without a GPU.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:?usage: run_on_gpu.sh BIN OUT}"
out="${2:?usage: run_on_gpu.sh BIN OUT}"
reps="${REPS:-20}"
threads="${THREADS:-2}"
streams="${STREAMS:-2}"
mkdir -p "$out"
export MEMPLACE_CACHE=off # both runs below decide; neither reuses the other's decisions
for p in memplace_demo memplace_demo_original; do
  [[ -x "$bin/$p" ]] || { echo "run_on_gpu.sh: $bin/$p missing (cmake --build --preset gpu)"; exit 1; }
done

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: no GPU"
  exit 77
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$out/device.txt"
date -u +"date: %Y-%m-%d %H:%M UTC" | tee -a "$out/device.txt"
status=0
args=(--size gpu --reps "$reps" --threads "$threads" --streams "$streams")
export MEMPLACE_QUIET=1

echo "== the program as written"
"$bin/memplace_demo_original" "${args[@]}" >"$out/original.txt" 2>&1 || status=1
cat "$out/original.txt"
echo "== through memplace, MEMPLACE_TIME=1"
MEMPLACE_TIME=1 MEMPLACE_REPORT="$out/report_timed.json" "$bin/memplace_demo" "${args[@]}" \
  >"$out/memplace_timed.txt" 2>&1 || status=1
cat "$out/memplace_timed.txt"
echo "== through memplace, kernel timing off"
MEMPLACE_REPORT="$out/report.json" "$bin/memplace_demo" "${args[@]}" >"$out/memplace.txt" 2>&1 || status=1
cat "$out/memplace.txt"
echo "== a second original run (run-to-run variation of the baseline)"
"$bin/memplace_demo_original" "${args[@]}" --threads 0 >"$out/original2.txt" 2>&1 || status=1
grep '^demo ' "$out/original2.txt"

py=$(command -v python3 || true)
if [[ -n "$py" ]]; then
  echo
  echo "== without MEMPLACE_TIME (end-to-end times without event overhead)"
  "$py" "$here/report_table.py" --report "$out/report.json" --run "$out/memplace.txt" \
    --original "$out/original.txt" | tee "$out/table_untimed.txt"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  echo
  echo "== with MEMPLACE_TIME=1"
  "$py" "$here/report_table.py" --report "$out/report_timed.json" --run "$out/memplace_timed.txt" \
    --original "$out/original.txt" | tee "$out/table.txt"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
else
  echo "no python3: the reports are in $out"
fi
echo "== overall: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
