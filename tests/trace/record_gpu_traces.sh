#!/usr/bin/env bash
# Records the GPU's warp-level traces of the rewritten corpus programs in the canonical form of
# trace_dump.cpp (issue 6 item 2). Runs inside the bundle that `record_traces.py bundle` makes
# (rewritten sources: no clang needed here): compiles every program with nvcc -arch=sm_90 with
# the runtime and trace_dump.cpp, runs it with MEMPLACE_TRACE_DUMP, and writes
#   $OUT/gpu_traces/<prog>.trace.xz  the canonical traces, compressed (commit them under
#                                    tests/trace/gpu_traces/)
#   $OUT/gpu_traces/<prog>.stdout  the program's output
#   $OUT/gpu_traces/device.txt     the GPU, driver, nvcc, date
#   $OUT/gpu_traces/build.log      compiler output
# Usage: record_gpu_traces.sh [--compile-only]   (--compile-only: build, do not run; no GPU needed)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$here/out}/gpu_traces"
build="${BUILD:-/tmp/memplace_gpu_traces_build}"
compile_only=0
[[ "${1:-}" == "--compile-only" ]] && compile_only=1
mkdir -p "$out" "$build"
nvcc_bin="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
jobs="$(nproc 2>/dev/null || echo 4)"
log="$out/build.log"
: >"$log"

if [[ $compile_only -eq 0 ]]; then
  if ! nvidia-smi >/dev/null 2>&1; then
    echo "SKIP: no GPU (nvidia-smi failed); use --compile-only to only build"
    exit 77
  fi
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/device.txt"
  date -u +"date: %Y-%m-%d %H:%M UTC" >>"$out/device.txt"
  "$nvcc_bin" --version | tail -2 >>"$out/device.txt"
fi

flags=(-std=c++20 -O2 -arch=sm_90 -I"$here" -I"$here/runtime/include" -w)
# The runtime's host library and the dump policy, once.
objs=()
for s in "$here"/runtime/src/*.cpp "$here/common/place.cpp" "$here/trace_dump.cpp"; do
  objs+=("$build/$(basename "${s%.cpp}").o")
done
printf '%s\n' "$here"/runtime/src/*.cpp "$here/common/place.cpp" "$here/trace_dump.cpp" |
  xargs -P "$jobs" -I{} sh -c 'o="'"$build"'/$(basename {} .cpp).o"; '"$nvcc_bin"' '"${flags[*]}"' -x cu -c {} -o "$o" || echo "FAILED {}"' \
  >>"$log" 2>&1
if grep -q FAILED "$log"; then
  echo "runtime build failed:"; cat "$log"; exit 1
fi
# The programs, in parallel.
ls "$here"/programs/*.cu | xargs -P "$jobs" -I{} sh -c \
  'p=$(basename {} .cu); '"$nvcc_bin"' '"${flags[*]}"' {} '"${objs[*]}"' -Xcompiler=-static-libstdc++,-static-libgcc -o "'"$build"'/$p" >"'"$build"'/$p.log" 2>&1 || echo "FAILED build $p"' \
  >>"$log" 2>&1
cat "$build"/*.log >>"$log" 2>/dev/null
status=0
if grep -q "FAILED build" "$log"; then
  grep "FAILED build" "$log"
  status=1
fi
if [[ $compile_only -eq 1 ]]; then
  echo "compiled $(ls "$build" | grep -vc '\.')  programs into $build"
  exit $status
fi
for src in "$here"/programs/*.cu; do
  p="$(basename "$src" .cu)"
  [[ -x "$build/$p" ]] || continue
  MEMPLACE_TRACE_DUMP="$out/$p.trace" MEMPLACE_QUIET=1 timeout 120 "$build/$p" >"$out/$p.stdout" 2>"$out/$p.stderr"
  rc=$?
  n=$(grep -c '^[rwaf]' "$out/$p.trace" 2>/dev/null || echo 0)
  echo "$p: exit $rc, $n records, $(tail -1 "$out/$p.stdout")"
  [[ $rc -eq 0 ]] || status=1
done
# Compressed for committing (compare_traces.py reads .trace.xz and .trace.gz).
if command -v xz >/dev/null; then xz -9 -f "$out"/*.trace; else gzip -9 -f "$out"/*.trace; fi
ls -la "$out"
exit $status
