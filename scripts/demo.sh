#!/usr/bin/env bash
# The main job on the bundled example (examples/demo/): `make demo` runs it after building.
# The example is a CUDA program as a user writes it (a CSR SpMV on a banded, a random and a
# power-law matrix; a particle filter's resampling on two particle counts). CMake built it twice
# through memplace_add_cuda_sources (cmake/memplace_cuda_sources.cmake): as written, and
# rewritten by `memplace rewrite` and linked with the runtime and the Placer. Both run here -- on
# the GPU when the build took nvcc (a GPU answered when CMake ran), else on the CPU emulation
# layer -- and the table shows what the Placer decided for each kernel and input and what it
# predicts (on a GPU also what it measured: MEMPLACE_TIME=1).
set -euo pipefail
build=${1:-build}
root="$(cd "$(dirname "$0")/.." && pwd)"
ex="$root/examples/demo"
out="$build/demo"
mkdir -p "$out"
backend=$(cat "$build/examples/demo/backend.txt" 2>/dev/null || echo "?")
cmake --build "$build" --target memplace_demo memplace_demo_original >/dev/null

gpu=0
if nvidia-smi -L >/dev/null 2>&1 && { command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; }; then
  gpu=1
fi
if [[ $gpu == 1 && $backend != CUDA ]]; then
  echo "note: a GPU is here but $build was configured for $backend; for the GPU run:"
  echo "      cmake -B $build -DMEMPLACE_CUDA_BACKEND=CUDA && make demo"
fi
args=()
env_time=()
if [[ $backend == CUDA ]]; then
  args=(--size gpu)
  env_time=(MEMPLACE_TIME=1)
  where="on the GPU ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
else
  where="under CPU emulation (no GPU: the emulated GPU is an H100, times are not GPU times)"
fi

echo "== 1. memplace rewrite: what the build did to examples/demo/*.cu (into $build/examples/demo/memplace/)"
if "$build/bin/memplace" rewrite "$ex/spmv.cu" -o "$out/rewritten" --force -- -I"$ex" >"$out/rewrite.txt" 2>&1 &&
   "$build/bin/memplace" rewrite "$ex/particle_filter.cu" -o "$out/rewritten" --force -- -I"$ex" >>"$out/rewrite.txt" 2>&1; then
  grep -v "^wrote\|^launches:" "$out/rewrite.txt" | sed '/^$/d'
else
  echo "(no CUDA installation for the rewriter here: the build used the reviewed copies in examples/demo/rewritten/)"
fi
echo
echo "== 2. run $where"
echo "   $build/bin/memplace_demo_original ${args[*]}"
"$build/bin/memplace_demo_original" "${args[@]}" >"$out/original.txt"
grep "^demo" "$out/original.txt" | sed 's/ launch_ms=.*//; s/^/   /'
# A cache of its own, emptied: the demo shows the Placer deciding, not a decision it remembers
# from the last `make demo` (by default decisions persist in ~/.cache/memplace/decisions).
rm -rf "$out/cache"
echo "   MEMPLACE_CACHE=$out/cache MEMPLACE_REPORT=$out/report.json ${env_time[*]} $build/bin/memplace_demo ${args[*]}"
env MEMPLACE_QUIET=1 MEMPLACE_CACHE="$out/cache" MEMPLACE_REPORT="$out/report.json" "${env_time[@]}" \
  "$build/bin/memplace_demo" "${args[@]}" >"$out/memplace.txt"
grep "^demo" "$out/memplace.txt" | sed 's/ launch_ms=.*//; s/^/   /'
echo
echo "== 3. the Placer's report ($out/report.json), per kernel and input"
python3 "$ex/report_table.py" --report "$out/report.json" --run "$out/memplace.txt" \
  --original "$out/original.txt"
