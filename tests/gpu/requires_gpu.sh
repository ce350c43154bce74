#!/bin/sh
# Runs one test of the GPU suite (tests/gpu/CMakeLists.txt): makes its results folder, then runs
# the command; skips (exit 77, the suite's SKIP_RETURN_CODE) where no GPU answers.
#   requires_gpu.sh RESULTS_DIR COMMAND [ARGS...]
results="${1:?usage: requires_gpu.sh RESULTS_DIR COMMAND [ARGS...]}"
shift
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: no GPU (nvidia-smi -L failed)"
  exit 77
fi
mkdir -p "$results" || exit 1
exec "$@"
