#!/usr/bin/env bash
# The just-in-time instantiation's GPU test (tests/runtime/jit_gpu_test.cu):
#   jit_gpu.sh build OUT [BUILD_DIR]   nvcc, linking the CMake build's runtime library (it has
#                                      the embedded device headers; BUILD_DIR default: build)
#   jit_gpu.sh run OUT                 three runs on the GPU: compile (NVRTC) and compare with the
#                                      specialised instantiations; everything from the disk cache;
#                                      a corrupt cache entry (a warning and a recompile)
#   jit_gpu.sh all OUT [BUILD_DIR]     both (skipped, exit 77, without a GPU)
# Exit 0 when it passed, 77 without a GPU (or without nvcc for build).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
step="${1:?usage: jit_gpu.sh build|run|all OUT [BUILD_DIR]}"
out="${2:?usage: jit_gpu.sh build|run|all OUT [BUILD_DIR]}"
build="${3:-$root/build}"
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
mkdir -p "$out"

do_build() {
  [[ -x "$NVCC" ]] || { echo "SKIP: no nvcc"; exit 77; }
  local lib="$build/lib"
  for l in memplace_runtime memplace_runtime_core memplace_common; do
    [[ -f "$lib/lib$l.a" ]] || { echo "jit_gpu.sh: $lib/lib$l.a missing (cmake --build first)" >&2; exit 1; }
  done
  # The kernel's text for NVRTC, from the very file nvcc compiles.
  { printf 'inline constexpr const char kJitGpuKernelText[] = R"jit(#include "memplace/accessors.cuh"\n'
    printf '#include "memplace/stage.cuh"\n'
    cat "$root/tests/runtime/jit_gpu_kernel.cuh"
    printf ')jit";\n'; } > "$out/jit_gpu_kernel_source.h"
  "$NVCC" -std=c++20 -O2 -arch=sm_90 -I"$root" -I"$root/runtime/include" -I"$out" \
    -I"$root/tests/runtime" -Xcompiler=-Wall \
    "$root/tests/runtime/jit_gpu_test.cu" \
    "$lib/libmemplace_runtime.a" "$lib/libmemplace_runtime_core.a" "$lib/libmemplace_common.a" \
    -Xcompiler=-static-libstdc++,-static-libgcc -ldl -lpthread -o "$out/jit_gpu_test" || exit 1
  echo "jit_gpu.sh: built $out/jit_gpu_test"
}

do_run() {
  local bin="$out/jit_gpu_test" status=0
  rm -rf "$out/cache"
  export MEMPLACE_JIT_CACHE="$out/cache" MEMPLACE_QUIET=0
  echo "== run 1: compile every placement"
  "$bin" | tee "$out/run1.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  echo "== run 2: from the disk cache"
  "$bin" | tee "$out/run2.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  grep -q "jit origins: compiled=0 cached=[1-9]" "$out/run2.log" \
    && echo "cache: the second run compiled nothing" \
    || { echo "FAIL the second run did not take everything from the cache"; status=1; }
  echo "== run 3: a corrupt cache entry"
  local victim
  victim="$(ls "$out"/cache/*.jit | head -1)"
  head -c 100 "$victim" > "$victim.tmp" && mv "$victim.tmp" "$victim"
  "$bin" > "$out/run3.log" 2>&1
  [[ $? -eq 0 ]] || status=1
  grep -q "JIT cache entry ignored" "$out/run3.log" && grep -q "compiled=1 " "$out/run3.log" \
    && echo "cache: a corrupt entry is a warning and a recompile" \
    || { echo "FAIL corrupt-entry run:"; cat "$out/run3.log"; status=1; }
  echo "jit GPU test: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
  return $status
}

case "$step" in
  build) do_build ;;
  run) do_run; exit $? ;;
  all)
    if ! nvidia-smi >/dev/null 2>&1; then echo "SKIP: no GPU"; exit 77; fi
    do_build
    do_run; exit $? ;;
  *) echo "usage: jit_gpu.sh build|run|all OUT [BUILD_DIR]" >&2; exit 2 ;;
esac
