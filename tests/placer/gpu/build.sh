#!/usr/bin/env bash
# Builds the Placer's GPU programs with nvcc, linking the CUDA build of the Placer and the engine
# from the CMake build (build/lib: clang-built static libraries; fmt and nlohmann are header-only,
# cudart and libstdc++ are linked statically), so that the binaries run on a GPU machine that
# has neither: build.sh OUTDIR [BUILD_DIR].
#   placer_bench          timings and checks (tests/placer/gpu/placer_bench.cu)
#   placer_auto_program   tests/placer/auto_program.cu: no Placer code, only linked
#   placer_alias_program  tests/rewrite/golden/aliasing.cu (the rewritten aliasing corpus
#                         program; tests/placer/alias_test.sh runs it)
#   placer_shadow_program tests/rewrite/golden/shadow_trace.cu (the rewritten shadow_trace
#                         corpus program; tests/placer/shadow_test.sh runs it)
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
out="${1:?usage: build.sh OUTDIR [BUILD_DIR]}"
build="${2:-$root/build}"
NVCC="${NVCC:-nvcc}"
mkdir -p "$out"
lib="$build/lib"
for l in memplace_placer memplace_runtime memplace_runtime_core memplace_search memplace_model \
         memplace_trace memplace_spec memplace_common; do
  [[ -f "$lib/lib$l.a" ]] || { echo "build.sh: $lib/lib$l.a missing (cmake --build first)" >&2; exit 1; }
done
flags=(-std=c++20 -O2 -arch=sm_90 -I"$root" -I"$root/runtime/include" -I"$root/tests/runtime"
       -Xcompiler=-Wall)
libs=("$lib/libmemplace_placer.a" "$lib/libmemplace_runtime.a" "$lib/libmemplace_runtime_core.a"
      "$lib/libmemplace_search.a" "$lib/libmemplace_model.a" "$lib/libmemplace_trace.a"
      "$lib/libmemplace_spec.a" "$lib/libmemplace_common.a")
link=(-arch=sm_90 -Xcompiler=-static-libstdc++,-static-libgcc -Xlinker
      --undefined=memplace_placer_autoinstall -lpthread)
"$NVCC" "${flags[@]}" -c "$root/tests/runtime/kernels/lookup.cu" -o "$out/lookup.o" &
"$NVCC" "${flags[@]}" -c "$root/tests/runtime/kernels/saxpy.cu" -o "$out/saxpy.o" &
"$NVCC" "${flags[@]}" -c "$root/tests/placer/gpu/placer_bench.cu" -o "$out/placer_bench.o" &
"$NVCC" "${flags[@]}" -c "$root/tests/placer/auto_program.cu" -o "$out/auto_program.o" &
"$NVCC" "${flags[@]}" -x cu -c "$root/tests/rewrite/golden/aliasing.cu" -o "$out/aliasing.o" &
"$NVCC" "${flags[@]}" -x cu -c "$root/tests/rewrite/golden/shadow_trace.cu" \
  -o "$out/shadow_trace.o" &
wait
"$NVCC" "${link[@]}" "$out/placer_bench.o" "$out/lookup.o" "$out/saxpy.o" "${libs[@]}" \
  -o "$out/placer_bench"
"$NVCC" "${link[@]}" "$out/auto_program.o" "${libs[@]}" -o "$out/placer_auto_program"
"$NVCC" "${link[@]}" "$out/aliasing.o" "${libs[@]}" -o "$out/placer_alias_program"
"$NVCC" "${link[@]}" "$out/shadow_trace.o" "${libs[@]}" -o "$out/placer_shadow_program"
echo "build.sh: built $out/placer_bench, $out/placer_auto_program, $out/placer_alias_program" \
  "and $out/placer_shadow_program"
