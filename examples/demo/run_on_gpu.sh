#!/usr/bin/env bash
# The demo on a GPU machine (no clang needed): builds the program as written and its rewritten
# form with nvcc -arch=sm_90 from a bundle made by make_gpu_bundle.sh, runs both on GPU-sized
# inputs (the memplace one with MEMPLACE_TIME=1 and MEMPLACE_REPORT; both run every input, then
# two host threads on two streams each, every output checked against the CPU reference and
# bitwise against the single-stream run), then once more without MEMPLACE_TIME, and prints the
# tables: decisions, predicted and measured benefit, end-to-end speedup including memplace's
# overhead, and first-launch vs later-launch overhead against kernel time (issue 7 item 6).
#   run_on_gpu.sh [BUNDLE]        BUNDLE: the folder this script is in, by default
# Environment: OUT (results; default BUNDLE/results), REPS (launches per input, default 20),
# THREADS / STREAMS (default 2 / 2), BIN (where the binaries are built; default OUT/bin),
# NVCC, BUILD_ONLY=1 (build and stop: make_gpu_bundle.sh builds the fallback binaries with it).
# Exit 0 when everything passed, 77 without a GPU.
set -uo pipefail
bundle="$(cd "${1:-$(dirname "$0")}" && pwd)"
out="${OUT:-$bundle/results}"
bin="${BIN:-$out/bin}"
reps="${REPS:-20}"
threads="${THREADS:-2}"
streams="${STREAMS:-2}"
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
mkdir -p "$out" "$bin"

build() {
  local b="$1" obj="$1/obj"
  mkdir -p "$obj"
  local flags=(-std=c++20 -O2 -arch=sm_90 -I"$bundle/include" -I"$bundle/src")
  local libs=()
  for l in memplace_placer memplace_runtime memplace_runtime_core memplace_search memplace_model \
           memplace_trace memplace_spec memplace_common; do
    libs+=("$bundle/lib/lib$l.a")
  done
  local link=(-arch=sm_90 -Xcompiler=-static-libstdc++,-static-libgcc)
  local pids=()
  "$NVCC" "${flags[@]}" -c "$bundle/src/main.cpp" -o "$obj/main.o" & pids+=($!)
  for f in spmv particle_filter; do
    "$NVCC" "${flags[@]}" -c "$bundle/src/$f.cu" -o "$obj/$f.orig.o" & pids+=($!)
    "$NVCC" "${flags[@]}" -c "$bundle/rewritten/$f.cu" -o "$obj/$f.rw.o" & pids+=($!)
  done
  local ok=0
  for p in "${pids[@]}"; do wait "$p" || ok=1; done
  [[ $ok -eq 0 ]] || return 1
  "$NVCC" "${link[@]}" "$obj/main.o" "$obj/spmv.orig.o" "$obj/particle_filter.orig.o" \
    -o "$b/memplace_demo_original" || return 1
  "$NVCC" "${link[@]}" -Xlinker --undefined=memplace_placer_autoinstall "$obj/main.o" \
    "$obj/spmv.rw.o" "$obj/particle_filter.rw.o" "${libs[@]}" -lpthread \
    -o "$b/memplace_demo" || return 1
}

if [[ -x "$NVCC" ]]; then
  echo "== building with $("$NVCC" --version | tail -1) into $bin"
  if build "$bin" >"$out/build.log" 2>&1; then
    echo "built $bin/memplace_demo_original and $bin/memplace_demo"
  else
    echo "nvcc build failed (see $out/build.log):"; tail -15 "$out/build.log"
    [[ "${BUILD_ONLY:-0}" == 1 ]] && exit 1
    if [[ -x "$bundle/bin/memplace_demo" ]]; then
      echo "using the binaries prebuilt by make_gpu_bundle.sh"; bin="$bundle/bin"
    else
      exit 1
    fi
  fi
elif [[ -x "$bundle/bin/memplace_demo" ]]; then
  echo "no nvcc: using the binaries prebuilt by make_gpu_bundle.sh"; bin="$bundle/bin"
else
  echo "no nvcc and no prebuilt binaries"; exit 1
fi
[[ "${BUILD_ONLY:-0}" == 1 ]] && exit 0

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
  "$py" "$bundle/report_table.py" --report "$out/report.json" --run "$out/memplace.txt" \
    --original "$out/original.txt" | tee "$out/table_untimed.txt"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  echo
  echo "== with MEMPLACE_TIME=1"
  "$py" "$bundle/report_table.py" --report "$out/report_timed.json" --run "$out/memplace_timed.txt" \
    --original "$out/original.txt" | tee "$out/table.txt"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
else
  echo "no python3: the reports are in $out"
fi
echo "== overall: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
