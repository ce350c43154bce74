#!/usr/bin/env bash
# Prepares the demo for a GPU machine that has no clang (so no `memplace rewrite`): a folder with
# the program as written (src/), its rewritten .cu files (rewritten/, by this machine's
# `memplace rewrite`), the runtime's headers (include/), the CUDA build of the Placer and the
# engine as static libraries (lib/, clang-built here; fmt and nlohmann-json are header-only),
# prebuilt binaries when nvcc is here (bin/, the fallback when building there fails), and the
# scripts (run_on_gpu.sh, report_table.py). run_on_gpu.sh builds with nvcc -arch=sm_90 there.
#   make_gpu_bundle.sh OUTDIR [BUILD_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:?usage: make_gpu_bundle.sh OUTDIR [BUILD_DIR]}"
build="${2:-$root/build}"
memplace="$build/bin/memplace"
libs=(memplace_placer memplace_runtime memplace_runtime_core memplace_search memplace_model
      memplace_trace memplace_spec memplace_common)
cmake --build "$build" --target memplace "${libs[@]}" >/dev/null
rm -rf "$out"
mkdir -p "$out/src" "$out/rewritten" "$out/include/common" "$out/lib" "$out/bin"
cp "$here"/{demo.h,main.cpp,spmv.cu,particle_filter.cu} "$out/src/"
for f in spmv.cu particle_filter.cu; do
  "$memplace" rewrite "$here/$f" -o "$out/rewritten" --force -- -I"$here" >"$out/rewritten/${f%.cu}.log"
done
cp -r "$root/runtime/include/memplace" "$out/include/"
cp "$root"/common/*.h "$out/include/common/"
# Without debug information: the bundle is carried to the GPU machine (keep it small).
for l in "${libs[@]}"; do strip --strip-debug -o "$out/lib/lib$l.a" "$build/lib/lib$l.a"; done
cp "$here/run_on_gpu.sh" "$here/report_table.py" "$out/"
# The same build run_on_gpu.sh makes there, here, as a fallback (nvcc compiles without a GPU).
if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  BUILD_ONLY=1 BIN="$out/bin" OUT="$out/prebuild" bash "$out/run_on_gpu.sh" "$out"
  rm -rf "$out/prebuild" "$out/bin/obj"
  strip --strip-debug "$out"/bin/memplace_demo*
fi
du -sh "$out" | awk '{print "make_gpu_bundle: " $2 " (" $1 ")"}'
