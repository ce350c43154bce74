#!/usr/bin/env bash
# CI without a GPU: compile every hand-rewritten test kernel and the test programs with
# nvcc -arch=sm_90 (tests/runtime/build.sh), and the contract's example exactly as
# docs/rewrite-contract.md writes it. Exit 77 (skipped) when nvcc is absent.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/build/tests/runtime/nvcc}"
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
if [[ ! -x "$NVCC" ]]; then
  echo "SKIP: nvcc not found"
  exit 77
fi
export NVCC
"$root/tests/runtime/build.sh" "$out"
echo "compile_kernels: every test kernel and the contract example compiled for sm_90"
