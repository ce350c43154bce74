#!/usr/bin/env bash
# Builds the runtime's GPU test and benchmark programs with nvcc alone (CUDA toolkit, no other
# dependency): build.sh OUTDIR [nvcc-flags...]. Objects are rebuilt only when a source or a
# runtime header is newer.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:?usage: build.sh OUTDIR [nvcc flags]}"
shift
mkdir -p "$out"
NVCC="${NVCC:-nvcc}"
flags=(-std=c++20 -O2 -arch=sm_90 -I"$root" -I"$root/runtime/include" -I"$root/tests/runtime"
       -Xcompiler=-Wall "$@")
headers=("$root"/runtime/include/memplace/*.h "$root"/runtime/include/memplace/*.cuh
         "$root"/runtime/src/*.h "$root"/tests/runtime/kernels/harness.h)
newest_header=$(ls -t "${headers[@]}" | head -1)

compile() { # source object
  local src="$1" obj="$2"
  if [[ ! -f "$obj" || "$src" -nt "$obj" || "$newest_header" -nt "$obj" ]]; then
    "$NVCC" "${flags[@]}" -c "$src" -o "$obj"
  fi
}
export -f compile
export NVCC newest_header
jobs=()
objs=()
for src in "$root"/runtime/src/*.cpp "$root"/common/place.cpp "$root"/tests/runtime/kernels/*.cu \
           "$root"/tests/runtime/gpu_tests.cu "$root"/tests/runtime/bench.cu; do
  obj="$out/$(basename "${src%.*}").o"
  objs+=("$obj")
  compile "$src" "$obj" &
  jobs+=($!)
done
status=0
for j in "${jobs[@]}"; do wait "$j" || status=1; done
[[ $status -eq 0 ]] || { echo "build.sh: compilation failed" >&2; exit 1; }
common=()
for o in "${objs[@]}"; do
  case "$(basename "$o")" in gpu_tests.o|bench.o) ;; *) common+=("$o") ;; esac
done
link=(-arch=sm_90 -Xcompiler=-static-libstdc++,-static-libgcc -ldl)
"$NVCC" "${link[@]}" "$out/gpu_tests.o" "${common[@]}" -o "$out/runtime_gpu_tests"
"$NVCC" "${link[@]}" "$out/bench.o" "${common[@]}" -o "$out/runtime_bench"
# The contract's example as its own program (its saxpy must not meet the test kernels' saxpy).
runtime_objs=()
for src in "$root"/runtime/src/*.cpp "$root"/common/place.cpp; do
  runtime_objs+=("$out/$(basename "${src%.*}").o")
done
compile "$root/tests/runtime/kernels/contract/contract_example.cu" "$out/contract_example.o"
"$NVCC" "${link[@]}" "$out/contract_example.o" "${runtime_objs[@]}" -o "$out/contract_example"
echo "build.sh: built $out/runtime_gpu_tests, $out/runtime_bench and $out/contract_example"
