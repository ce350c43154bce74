#!/usr/bin/env bash
# The rewriter's GPU verification (issue 5 item 4) in one command, for the device machine, which
# has nvcc but no clang: rewriting happens beforehand, here:
#
#   python3 tests/rewrite/verify.py rewrite --backend nvcc --out .carry/rwverify   # (clang)
#   # on the GPU machine, with .carry/rwverify carried:
#   tests/rewrite/run_on_gpu.sh .carry/rwverify
#
# It compiles every rewritten corpus program and its original with nvcc -arch=sm_90, runs the
# original and every planned placement (specialised instantiation when compiled, the dynamic
# accessor, and a just-in-time NVRTC instantiation when not compiled) with outputs poisoned first
# and compared bitwise (verify.py run), runs
# compute-sanitizer memcheck over one placement per place and kernel (verify.py memcheck), and
# the runtime's GPU tests, whose trace checks compare GPU traces with hand-computed expectations
# (tests/runtime/run_on_gpu.sh). Results: $OUT (default build-gpu/rewrite-results): device.txt,
# results.md, memcheck.md, runtime/, run.log. Exit 0 when everything passed; 77 without a GPU.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$(cd "${1:?usage: run_on_gpu.sh PLANNED_DIR (made by verify.py rewrite --backend nvcc)}" && pwd)"
out="${OUT:-$root/build-gpu/rewrite-results}"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
say() { echo "== $*" | tee -a "$log"; }
if ! nvidia-smi >/dev/null 2>&1; then
  echo "SKIP: no GPU (nvidia-smi failed)"
  exit 77
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/device.txt"
date -u +"date: %Y-%m-%d %H:%M UTC" | tee -a "$out/device.txt"
jobs=$(nproc)
status=0
verify=(python3 "$root/tests/rewrite/verify.py" --backend nvcc --dir "$dir" --out "$dir")

say "compile (nvcc -arch=sm_90, $jobs jobs)"
"${verify[@]}" compile --jobs "$jobs" 2>&1 | tee -a "$log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1

say "every placement, bitwise against the original"
"${verify[@]}" run --jobs 8 2>&1 | tee -a "$log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
cp "$dir/results.md" "$dir/results.json" "$out/" 2>/dev/null

say "compute-sanitizer memcheck"
"${verify[@]}" memcheck --jobs 8 2>&1 | tee -a "$log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
cp "$dir/memcheck.md" "$out/" 2>/dev/null

say "runtime GPU tests (placements, traces against hand-computed expectations)"
OUT="$out/runtime" "$root/tests/runtime/run_on_gpu.sh" 2>&1 | tail -40 | tee -a "$log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1

say "summary"
head -3 "$out/results.md" | tee -a "$log"
head -1 "$out/memcheck.md" | tee -a "$log"
grep -E "^\| |pass|FAIL" "$out/runtime/tests.md" 2>/dev/null | tail -3 | tee -a "$log"
echo "rewrite GPU verification: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)" | tee -a "$log"
exit $status
