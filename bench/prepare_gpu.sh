#!/usr/bin/env bash
# Prepares, here (clang-19, the project's libraries, nvcc), everything bench/run_on_gpu.sh runs on
# a GPU machine (which has nvcc and CMake, but no clang):
#   the GPU suite   cmake --preset gpu; cmake --build --preset gpu (tests/gpu: build-gpu/gpu)
#   the evaluation  bench/eval/prepare.py (rewritten programs, originals, libraries: DIR/eval)
#   bench/prepare_gpu.sh [DIR] [prepare.py options...]      DIR: default out/gpu (git-ignored)
# and prints what to carry with the source tree (the device tool's `carry`): build-gpu's
# CTestTestfile.cmake and gpu/ folder, and DIR/eval.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(mkdir -p "${1:-$root/out/gpu}" && cd "${1:-$root/out/gpu}" && pwd)"
shift || true
cd "$root"
echo "prepare_gpu: the GPU suite (cmake --preset gpu)"
cmake --preset gpu >/dev/null
cmake --build --preset gpu
echo "prepare_gpu: the evaluation"
rm -rf "$dir/eval"
python3 bench/eval/prepare.py --carry "$dir/eval" --compile bench/eval/compile_h100.json "$@" \
  2> >(grep -v "extra compiled placement for" >&2)
du -sh build-gpu/gpu "$dir/eval"
echo "carry: build-gpu/CTestTestfile.cmake build-gpu/gpu ${dir#"$root"/}/eval"
