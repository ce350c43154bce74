#!/usr/bin/env bash
# Everything memplace checks and times on a GPU, on the GPU machine, over what
# bench/prepare_gpu.sh prepared (carried with the source tree):
#   bench/run_on_gpu.sh suite [ctest options...]   the GPU suite: ctest --preset gpu (tests/gpu),
#                                                  e.g. `-LE corpus` (all but the rewriter's
#                                                  corpus), `-L corpus`, `-R gpu_placer`
#   bench/run_on_gpu.sh eval [DIR]                 the evaluation (bench/evaluate.sh over DIR/eval,
#                                                  default out/gpu)
# Results go to $OUT (default build-gpu/results), packed so that they come back from the device
# tool: suite.tgz (the tests' reports, build-gpu/gpu/results, and ctest's log), eval.tgz, and
# summary.txt, whose short table is also printed last. Exit 0 when everything passed; 77 without
# a GPU.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
part="${1:?usage: run_on_gpu.sh suite [ctest options...] | eval [DIR]}"
shift
out="${OUT:-$root/build-gpu/results}"
mkdir -p "$out"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: no GPU"
  exit 77
fi
cd "$root"
summary="$out/summary.txt"
t0=$(date +%s)
case "$part" in
  suite)
    ctest --preset gpu --output-junit "$out/junit.xml" "$@" >"$out/ctest.log" 2>&1
    status=$?
    # One line per test: name, result, seconds.
    grep -E "^ *[0-9]+/[0-9]+ Test +#" "$out/ctest.log" \
      | sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: //; s/ \.+ */ /' >"$summary"
    grep -E "tests passed|tests failed" "$out/ctest.log" >>"$summary"
    cp "$out/ctest.log" build-gpu/gpu/results/ 2>/dev/null
    # The corpus tests' reports are beside their programs (corpus/), not under results/.
    tar czf "$out/suite.tgz" -C build-gpu/gpu results \
      $(cd build-gpu/gpu && ls corpus/*.md corpus/*.json 2>/dev/null) 2>/dev/null
    ;;
  eval)
    dir="$(cd "${1:-$root/out/gpu}" && pwd)"
    work="$(mktemp -d)"
    EVAL_DEADLINE_S="${EVAL_DEADLINE_S:-420}" EVAL_MAX="${EVAL_MAX:-64}" \
      EVAL_REPEAT="${EVAL_REPEAT:-10}" EVAL_WARMUP="${EVAL_WARMUP:-2}" \
      EVAL_BUDGET_MS="${EVAL_BUDGET_MS:-4000}" \
      bash "$dir/eval/eval/evaluate.sh" "$dir/eval" "$work/eval" >"$work/eval.log" 2>&1
    status=$?
    printf 'evaluation (bench/evaluate.sh)  %s  %s\n' \
      "$([[ $status -eq 0 ]] && echo pass || echo FAIL)" \
      "$(grep -m1 "within 5% of the best" "$work/eval.log")" >"$summary"
    cp "$work/eval.log" "$work/eval/run.log"
    tar czf "$out/eval.tgz" -C "$work" eval
    rm -rf "$work"
    ;;
  *)
    echo "usage: run_on_gpu.sh suite [ctest options...] | eval [DIR]" >&2
    exit 2
    ;;
esac
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%F)" \
  >>"$summary"
cat "$summary"
echo "overall: $([[ $status -eq 0 ]] && echo PASS || echo FAIL) in $(($(date +%s) - t0)) s"
exit $status
