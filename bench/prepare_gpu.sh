#!/usr/bin/env bash
# Prepares everything bench/run_on_gpu.sh runs on a GPU machine, here, where clang-19 (the
# rewriter) and the CMake build are: one folder to carry (the device machine has nvcc but no
# clang). Run `cmake --build build` first.
#   bench/prepare_gpu.sh [DIR]        DIR (default out/gpu; git ignores out/)
# DIR gets:
#   eval/    the evaluation (bench/eval/prepare.py: rewritten programs, originals, libraries)
#   rw/      every corpus program rewritten for the rewriter's GPU verification (verify.py)
#   placer/  the Placer's GPU programs, built here with nvcc (tests/placer/gpu/build.sh)
#   demo/    the bundled example (examples/demo/make_gpu_bundle.sh)
#   jit/     the just-in-time instantiation's GPU test (tests/runtime/jit_gpu.sh build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(mkdir -p "${1:-$root/out/gpu}" && cd "${1:-$root/out/gpu}" && pwd)"
cd "$root"
rm -rf "$dir/eval" "$dir/rw" "$dir/placer" "$dir/demo" "$dir/jit"
echo "prepare_gpu: evaluation"
python3 bench/eval/prepare.py --carry "$dir/eval" --compile bench/eval/compile_h100.json \
  2> >(grep -v "extra compiled placement for" >&2)
echo "prepare_gpu: rewriter verification"
python3 tests/rewrite/verify.py rewrite --backend nvcc --out "$dir/rw" >/dev/null
echo "prepare_gpu: Placer programs"
tests/placer/gpu/build.sh "$dir/placer" build >/dev/null
rm -f "$dir"/placer/*.o
strip --strip-debug "$dir"/placer/placer_* # the working tree that travels is 64 MB at most
echo "prepare_gpu: demo bundle"
examples/demo/make_gpu_bundle.sh "$dir/demo" build >/dev/null
echo "prepare_gpu: JIT test"
tests/runtime/jit_gpu.sh build "$dir/jit" build >/dev/null
strip --strip-debug "$dir/jit/jit_gpu_test"
du -sh "$dir" "$dir"/*
