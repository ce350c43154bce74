#!/usr/bin/env bash
# The just-in-time instantiation's GPU test (tests/runtime/jit_gpu_test.cu; ctest gpu_jit of the
# GPU suite, tests/gpu): three runs on the GPU: compile (NVRTC) and compare with the specialised
# instantiations; everything from the disk cache; a corrupt cache entry (a warning and a
# recompile).
#   jit_gpu.sh PROGRAM OUT        Exit 0 when it passed.
set -uo pipefail
program="${1:?usage: jit_gpu.sh PROGRAM OUT}"
out="${2:?usage: jit_gpu.sh PROGRAM OUT}"
mkdir -p "$out"

do_run() {
  local status=0
  rm -rf "$out/cache"
  export MEMPLACE_JIT_CACHE="$out/cache" MEMPLACE_QUIET=0
  echo "== run 1: compile every placement"
  "$program" | tee "$out/run1.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  echo "== run 2: from the disk cache"
  "$program" | tee "$out/run2.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  grep -q "jit origins: compiled=0 cached=[1-9]" "$out/run2.log" \
    && echo "cache: the second run compiled nothing" \
    || { echo "FAIL the second run did not take everything from the cache"; status=1; }
  echo "== run 3: a corrupt cache entry"
  local victim
  victim="$(ls "$out"/cache/*.jit | head -1)"
  head -c 100 "$victim" > "$victim.tmp" && mv "$victim.tmp" "$victim"
  "$program" > "$out/run3.log" 2>&1
  [[ $? -eq 0 ]] || status=1
  grep -q "JIT cache entry ignored" "$out/run3.log" && grep -q "compiled=1 " "$out/run3.log" \
    && echo "cache: a corrupt entry is a warning and a recompile" \
    || { echo "FAIL corrupt-entry run:"; cat "$out/run3.log"; status=1; }
  echo "jit GPU test: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
  return $status
}

do_run
