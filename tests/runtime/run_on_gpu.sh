#!/usr/bin/env bash
# The runtime's whole GPU check in one command, for the device machine (or any machine with a
# GPU and the CUDA toolkit): build (unless BIN already holds the programs), the bitwise placement
# tests and trace checks, the SASS checks, compute-sanitizer memcheck over the tests, racecheck
# over the shared-staging cases, and the benchmark. Results go to $OUT (default
# build-gpu/results): device.txt, tests.md, sass.log, memcheck.log, racecheck.log, bench.md,
# run.log. Exit status: 0 when everything passed.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="${OUT:-$root/build-gpu/results}"
bin="${BIN:-$root/build-gpu}"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
say() { echo "== $*" | tee -a "$log"; }

if ! nvidia-smi >/dev/null 2>&1; then
  echo "SKIP: no GPU (nvidia-smi failed)"
  exit 77
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
  | tee "$out/device.txt"
date -u +"date: %Y-%m-%d %H:%M UTC" | tee -a "$out/device.txt"
nvcc --version 2>/dev/null | tail -2 >>"$out/device.txt"

if [[ ! -x "$bin/runtime_gpu_tests" || ! -x "$bin/runtime_bench" || ! -x "$bin/contract_example" ]]; then
  say "building into $bin"
  tests/runtime/build.sh "$bin" 2>&1 | tee -a "$log" || exit 1
fi

status=0
say "tests"
"$bin/runtime_gpu_tests" "$out/tests.md" 2>&1 | tee -a "$log"
rc=${PIPESTATUS[0]}; [[ $rc -eq 0 ]] || { echo "tests: exit $rc" | tee -a "$log"; status=1; }

say "the contract's example (docs/rewrite-contract.md), default placement and MEMPLACE=force"
"$bin/contract_example" 2>&1 | tee -a "$log"
rc1=${PIPESTATUS[0]}
MEMPLACE=force:x=texture,saxpy.y=l2persist "$bin/contract_example" 2>&1 | tee -a "$log"
rc2=${PIPESTATUS[0]}
MEMPLACE=force:x=readonly MEMPLACE_DISPATCH=dynamic "$bin/contract_example" 2>&1 | tee -a "$log"
rc3=${PIPESTATUS[0]}
echo "contract example: exit $rc1 (default), $rc2 (forced), $rc3 (forced, dynamic)" | tee -a "$log"
[[ $rc1 -eq 0 && $rc2 -eq 0 && $rc3 -eq 0 ]] || status=1

say "SASS"
cuobjdump_bin="$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)"
python3 tests/runtime/check_sass.py "$cuobjdump_bin" "$bin"/{saxpy,lookup,stencil2d,blockwise,histogram}.o \
  >"$out/sass.log" 2>&1
rc=$?; tail -3 "$out/sass.log" | tee -a "$log"; [[ $rc -eq 0 ]] || status=1

say "compute-sanitizer memcheck"
compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
  "$bin/runtime_gpu_tests" >"$out/memcheck.log" 2>&1
rc=$?; tail -4 "$out/memcheck.log" | tee -a "$log"
[[ $rc -eq 0 ]] || { echo "memcheck: exit $rc" | tee -a "$log"; status=1; }

say "compute-sanitizer racecheck (shared staging: blockwise, saxpy)"
MPT_CASES=blockwise,saxpy compute-sanitizer --tool racecheck --error-exitcode 3 --print-limit 20 \
  "$bin/runtime_gpu_tests" >"$out/racecheck.log" 2>&1
rc=$?; tail -4 "$out/racecheck.log" | tee -a "$log"
[[ $rc -eq 0 ]] || { echo "racecheck: exit $rc" | tee -a "$log"; status=1; }

say "benchmark"
"$bin/runtime_bench" "$out/bench.md" 2>&1 | tee -a "$log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1

say "overall: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit $status
