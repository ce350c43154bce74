#!/usr/bin/env bash
# CI without a GPU: every corpus program of tests/frontend/kernels/, rewritten by `memplace
# rewrite` (and with --launches-only), compiles with nvcc -arch=sm_90.
#   compile_corpus.sh MEMPLACE_BIN OUTDIR
# Exit 77 (skipped) when nvcc is absent.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
memplace="${1:?usage: compile_corpus.sh MEMPLACE_BIN OUTDIR}"
out="${2:?usage: compile_corpus.sh MEMPLACE_BIN OUTDIR}"
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
if [[ ! -x "$NVCC" ]]; then
  echo "SKIP: nvcc not found"
  exit 77
fi
mkdir -p "$out/full" "$out/orig"
flags=(-std=c++20 -O1 -arch=sm_90 -I"$root" -I"$root/runtime/include" -c)
status=0
pids=()
names=()
for src in "$root"/tests/frontend/kernels/*.cu; do
  name=$(basename "$src" .cu)
  "$memplace" rewrite "$src" -o "$out/full" --force >"$out/full/$name.rewrite.log" 2>&1 ||
    { echo "FAIL rewrite $name"; cat "$out/full/$name.rewrite.log"; status=1; continue; }
  "$memplace" rewrite "$src" -o "$out/orig" --launches-only --force >"$out/orig/$name.rewrite.log" 2>&1 ||
    { echo "FAIL rewrite --launches-only $name"; status=1; continue; }
  for kind in full orig; do
    ( "$NVCC" "${flags[@]}" "$out/$kind/$name.cu" -o "$out/$kind/$name.o" >"$out/$kind/$name.nvcc.log" 2>&1 ) &
    pids+=($!)
    names+=("$kind/$name")
    # Two compilations at a time per core is enough; nvcc is memory-hungry.
    if (( ${#pids[@]} >= $(nproc) )); then
      for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || { echo "FAIL nvcc ${names[$i]}"; cat "$out/${names[$i]}.nvcc.log"; status=1; }
      done
      pids=(); names=()
    fi
  done
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { echo "FAIL nvcc ${names[$i]}"; cat "$out/${names[$i]}.nvcc.log"; status=1; }
done
[[ $status -eq 0 ]] && echo "compile_corpus: every rewritten corpus program compiles with nvcc -arch=sm_90"
exit $status
