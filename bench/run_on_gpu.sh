#!/usr/bin/env bash
# Everything memplace checks and times on a GPU, in one command, for the device machine:
#   bench/run_on_gpu.sh [verify|quick|eval|all] [DIR]
# DIR is what bench/prepare_gpu.sh wrote here (default out/gpu). Parts:
#   verify  the rewriter's GPU verification (every placement of the corpus bitwise against the
#           original, compute-sanitizer memcheck, the runtime's GPU tests with trace checks,
#           SASS, racecheck and the runtime benchmark), the Placer's GPU run (overheads, decision
#           cache, modes, memcheck), the JIT instantiations against the specialised ones and
#           the bundled example on GPU-sized inputs;
#   quick   verify without the rewriter's corpus (the runtime's GPU tests, the Placer, the demo);
#   eval    the evaluation (bench/evaluate.sh: every kernel x input, every planned placement);
#   all     both (the default).
# Results go to $OUT (default DIR/results), packed so that they come back from the device tool:
# verify.tgz, eval.tgz, and summary.txt, whose short table is also printed last.
# Exit 0 when every part passed; 77 without a GPU.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
part="${1:-all}"
dir="$(cd "${2:-$root/out/gpu}" && pwd)"
out="${OUT:-$dir/results}"
mkdir -p "$out"
if ! nvidia-smi >/dev/null 2>&1; then
  echo "SKIP: no GPU"
  exit 77
fi
work="$(mktemp -d)"
summary="$out/summary.txt"
: >"$summary"
status=0
t0=$(date +%s)
row() { printf '%-34s %-6s %6ss  %s\n' "$1" "$2" "$(($(date +%s) - $3))" "$4" >>"$summary"; }

if [[ "$part" == verify || "$part" == quick || "$part" == all ]]; then
  s=$(date +%s)
  if [[ "$part" == quick ]]; then
    OUT="$work/verify/runtime" "$root/tests/runtime/run_on_gpu.sh" >"$work/runtime.log" 2>&1
    rc=$?
    row "runtime GPU checks" "$([[ $rc -eq 0 ]] && echo pass || echo FAIL)" "$s" \
      "$(grep -h -m1 -E "checks, " "$work/verify/runtime/tests.md" 2>/dev/null | head -c 90)"
  else
    OUT="$work/verify/rewrite" "$root/tests/rewrite/run_on_gpu.sh" "$dir/rw" >"$work/rewrite.log" 2>&1
    rc=$?
    row "rewriter + runtime GPU checks" "$([[ $rc -eq 0 ]] && echo pass || echo FAIL)" "$s" \
      "$(grep -h -m1 -E "runs|mismatch" "$work/verify/rewrite/results.md" 2>/dev/null | head -c 90)"
  fi
  [[ $rc -eq 0 ]] || status=1
  s=$(date +%s)
  # RT_BIN: none, the runtime's GPU tests ran in the step before.
  BIN="$dir/placer" RT_BIN=/nonexistent OUT="$work/verify/placer" \
    "$root/tests/placer/gpu/run_on_gpu.sh" >"$work/placer.log" 2>&1
  rc=$?
  row "Placer (overheads, cache, modes)" "$([[ $rc -eq 0 ]] && echo pass || echo FAIL)" "$s" ""
  [[ $rc -eq 0 ]] || status=1
  s=$(date +%s)
  "$root/tests/runtime/jit_gpu.sh" run "$dir/jit" >"$work/jit.log" 2>&1
  rc=$?
  cp -r "$dir/jit" "$work/verify/jit" 2>/dev/null
  rm -rf "$work/verify/jit/cache" "$work/verify/jit/jit_gpu_test"
  row "JIT (NVRTC) instantiations" "$([[ $rc -eq 0 ]] && echo pass || echo FAIL)" "$s" \
    "$(grep -m1 -E "checks|passed|failed" "$work/jit.log" | head -c 90)"
  [[ $rc -eq 0 ]] || status=1
  s=$(date +%s)
  OUT="$work/verify/demo" "$dir/demo/run_on_gpu.sh" "$dir/demo" >"$work/demo.log" 2>&1
  rc=$?
  row "bundled example (make demo's job)" "$([[ $rc -eq 0 ]] && echo pass || echo FAIL)" "$s" ""
  [[ $rc -eq 0 ]] || status=1
  cp "$work"/*.log "$work/verify/" 2>/dev/null
  tar czf "$out/verify.tgz" -C "$work" verify
fi

if [[ "$part" == eval || "$part" == all ]]; then
  s=$(date +%s)
  EVAL_DEADLINE_S="${EVAL_DEADLINE_S:-420}" EVAL_MAX="${EVAL_MAX:-64}" \
    EVAL_REPEAT="${EVAL_REPEAT:-10}" EVAL_WARMUP="${EVAL_WARMUP:-2}" \
    EVAL_BUDGET_MS="${EVAL_BUDGET_MS:-4000}" \
    bash "$dir/eval/eval/evaluate.sh" "$dir/eval" "$work/eval" >"$work/eval.log" 2>&1
  rc=$?
  row "evaluation (bench/evaluate.sh)" "$([[ $rc -eq 0 ]] && echo pass || echo FAIL)" "$s" \
    "$(grep -m1 "within 5% of the best" "$work/eval.log" | head -c 90)"
  [[ $rc -eq 0 ]] || status=1
  cp "$work/eval.log" "$work/eval/run.log"
  tar czf "$out/eval.tgz" -C "$work" eval
fi

echo
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%F)" \
  >>"$summary"
cat "$summary"
echo "overall: $([[ $status -eq 0 ]] && echo PASS || echo FAIL) in $(($(date +%s) - t0)) s"
rm -rf "$work"
exit $status
