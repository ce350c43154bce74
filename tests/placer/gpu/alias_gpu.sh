#!/usr/bin/env bash
# The aliasing test on a GPU (ctest placer_alias_gpu, label gpu): builds the rewritten aliasing
# program with nvcc and the CUDA build of the Placer (build.sh), then runs alias_test.sh; with
# TEST `shadow` (ctest placer_shadow_gpu), the shadow_trace program and shadow_test.sh.
#   alias_gpu.sh OUTDIR [BUILD_DIR [alias|shadow]]      exit 77 (skipped) without a GPU or nvcc
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: alias_gpu.sh OUTDIR [BUILD_DIR]}"
build="${2:-$here/../../../build}"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: no GPU (nvidia-smi failed)"
  exit 77
fi
if ! command -v "${NVCC:-nvcc}" >/dev/null 2>&1; then
  echo "SKIP: no nvcc"
  exit 77
fi
mkdir -p "$out"
"$here/build.sh" "$out" "$build" || exit 1
test="${3:-alias}"
case "$test" in
  alias | shadow) ;;
  *) echo "alias_gpu.sh: unknown test '$test' (alias or shadow)" >&2; exit 2 ;;
esac
exec "$here/../${test}_test.sh" "$out/placer_${test}_program" "$out/run"
