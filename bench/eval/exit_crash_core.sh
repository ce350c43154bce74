#!/usr/bin/env bash
# The whole evaluation with core dumps on, then a backtrace of every core (cuda-gdb reads host
# cores): how the evaluation's exit crash, which a program run alone did not reproduce, was
# found (decision 017).
#   bash bench/eval/exit_crash_core.sh out/gpu/eval      (results under $OUT)
set -u
carry="$(cd "$1" && pwd)"
out="${OUT:-/tmp/crashcore}"
mkdir -p "$out"
ulimit -c unlimited
echo "/tmp/cores/core.%e.%p" >/proc/sys/kernel/core_pattern 2>/dev/null || echo "core_pattern: $(cat /proc/sys/kernel/core_pattern)"
mkdir -p /tmp/cores
export EVAL_WORK=/tmp/memplace-eval-core EVAL_MAX=64 EVAL_REPEAT=10 EVAL_WARMUP=2 EVAL_BUDGET_MS=4000 EVAL_DEADLINE_S=420
bash "$carry/eval/evaluate.sh" "$carry" "$out/eval" >"$out/eval.log" 2>&1
grep -h " 139 \| 134 " "$EVAL_WORK/runs/walls.txt"
ls -la /tmp/cores "$PWD"/core* 2>/dev/null | head
for c in /tmp/cores/core.* core core.*; do
  [[ -f "$c" ]] || continue
  exe=$(basename "$c" | cut -d. -f2)
  cuda-gdb -q -batch -ex "thread apply all bt 25" "$EVAL_WORK/rw/$exe" "$c" >"$out/bt_$(basename "$c").txt" 2>&1
  head -c 6000 "$out/bt_$(basename "$c").txt"
done
