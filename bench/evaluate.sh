#!/usr/bin/env bash
# The evaluation on a GPU machine, in one go (issue 8, docs/EVALUATION.md):
#   bench/evaluate.sh CARRY [OUT]
# CARRY is what bench/eval/prepare.py wrote (rewritten programs, originals, runtime headers,
# the Placer's static libraries, cases.json); OUT (default $OUT, else ./eval-out) gets
# placements.csv, cases.csv, device.txt, eval.log, raw.tgz (every JSON line and report),
# plots.tgz (analyze.py --plots) and traces.tar.xz (the Placer's traces, when small enough).
#
#  1. builds the sixteen originals (nvcc -O3 -arch=sm_90), then the rewritten programs linked
#     with the Placer, in parallel on every core; the originals are timed meanwhile (GPU events,
#     the CPU load of the compiler does not enter them);
#  2. runs every case of cases.json with MEMPLACE=sweep: the Placer traces the first launch and
#     decides; the next launch measures every planned placement (those not compiled in as
#     just-in-time instantiations unless EVAL_JIT=auto; CUDA events, warm-up, median
#     of EVAL_REPEAT launches, outputs compared bitwise with the original placement's); the
#     program then goes on under the Placer's decision (its checksum is compared with the
#     original binary's);
#  3. writes the CSVs and prints the summary table last.
# EVAL_ORIGINALS=0 takes the originals' results from CARRY/eval/orig (an earlier run of the same
# inputs) instead of timing them again.
# Environment: EVAL_DEADLINE_S (default 500: no case starts after it), EVAL_CASE_TIMEOUT_S (90),
# EVAL_MAX (64 placements per signature), EVAL_BUDGET_MS (3000 per signature), EVAL_REPEAT (10),
# EVAL_WARMUP (2), EVAL_JOBS (cores), EVAL_JIT (always: placements not compiled in are measured
# as JIT instantiations; auto: through the dynamic accessor), EVAL_PROGRAM_REPEAT (30 timed runs
# of each program, so that the Placer's on-line tuning finishes within the run).
set -uo pipefail
carry="$(cd "${1:?usage: evaluate.sh CARRY [OUT]}" && pwd)"
out="${2:-${OUT:-$PWD/eval-out}}"
mkdir -p "$out"
work="${EVAL_WORK:-/tmp/memplace-eval}"
rm -rf "$work"
mkdir -p "$work/orig" "$work/rw" "$work/obj" "$work/runs"
log="$out/eval.log"
: >"$log"
t0=$(date +%s)
elapsed() { echo $(($(date +%s) - t0)); }
say() { echo "[$(elapsed)s] $*" | tee -a "$log"; }
deadline="${EVAL_DEADLINE_S:-500}"
jobs="${EVAL_JOBS:-$(nproc)}"
NVCC="${NVCC:-nvcc}"

if ! nvidia-smi >/dev/null 2>&1; then
  echo "SKIP: no GPU"
  exit 77
fi
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv
  "$NVCC" --version | tail -2
  date -u +"date: %Y-%m-%d %H:%M UTC"
  echo "commit: $(python3 -c "import json;print(json.load(open('$carry/eval/cases.json'))['commit'])")"
} >"$out/device.txt" 2>&1
cat "$out/device.txt" | tee -a "$log"

mapfile -t programs < <(python3 -c "import json;print('\n'.join(json.load(open('$carry/eval/cases.json'))['programs']))")
mapfile -t caselines < <(python3 -c "
import json
m = json.load(open('$carry/eval/cases.json'))
for c in m['cases']:
    print(c['program'], c['input'], m['originals'].get(c['program'], '') or '-')")

# ---- 1. build ------------------------------------------------------------------------------
say "building ${#programs[@]} originals"
printf '%s\n' "${programs[@]}" | xargs -P "$jobs" -I{} sh -c \
  "'$NVCC' -O3 -arch=sm_90 -std=c++17 -I'$carry/kernels' -o '$work/orig/{}' '$carry/kernels/{}.cu' >'$work/orig/{}.log' 2>&1 || echo 'original {} failed to build'"
say "building ${#programs[@]} rewritten programs (background)"
libs="$carry/lib/libmemplace_placer.a $carry/lib/libmemplace_runtime.a $carry/lib/libmemplace_runtime_core.a $carry/lib/libmemplace_search.a $carry/lib/libmemplace_model.a $carry/lib/libmemplace_trace.a $carry/lib/libmemplace_spec.a $carry/lib/libmemplace_common.a"
(
  printf '%s\n' "${programs[@]}" | xargs -P "$jobs" -I{} sh -c \
    "s=\$(date +%s); '$NVCC' -std=c++20 -O3 -arch=sm_90 -I'$carry/include' -I'$carry/kernels' -c '$carry/src/{}.cu' -o '$work/obj/{}.o' >'$work/rw/{}.log' 2>&1 && '$NVCC' -arch=sm_90 -Xcompiler=-static-libstdc++,-static-libgcc -Xlinker --undefined=memplace_placer_autoinstall '$work/obj/{}.o' $libs -lpthread -o '$work/rw/{}' >>'$work/rw/{}.log' 2>&1; echo \"{} \$?  \$((\$(date +%s)-s))s\" >>'$work/rw/build.txt'"
) &
build_pid=$!

if [[ "${EVAL_ORIGINALS:-1}" == "0" && -d "$carry/eval/orig" ]]; then
  say "originals: the earlier run's results ($carry/eval/orig), not timed again"
  cp "$carry/eval/orig/"*.json "$work/runs/" 2>/dev/null
else
  say "timing the originals (one at a time, while the rewritten programs build)"
  for line in "${caselines[@]}"; do
    read -r prog input _ <<<"$line"
    tag="${prog}__${input}"
    if [[ -x "$work/orig/$prog" ]]; then
      timeout 120 "$work/orig/$prog" --input "$input" >"$work/runs/orig_$tag.json" 2>"$work/runs/orig_$tag.err"
      echo "orig $tag rc=$? $(head -c 160 "$work/runs/orig_$tag.json")" >>"$log"
    fi
  done
fi
say "originals timed; waiting for the build"
wait "$build_pid"
cat "$work/rw/build.txt" | tee -a "$log"
for p in "${programs[@]}"; do
  [[ -x "$work/rw/$p" ]] || { say "rewritten $p failed to build:"; tail -20 "$work/rw/$p.log" | tee -a "$log"; }
done

# ---- 2. sweeps ---------------------------------------------------------------------------------
say "sweeping ${#caselines[@]} cases (deadline ${deadline}s)"
export MEMPLACE=sweep MEMPLACE_TIME=1 MEMPLACE_QUIET=1 MEMPLACE_CACHE=off  # every case decided afresh
export MEMPLACE_SWEEP_MAX="${EVAL_MAX:-64}" MEMPLACE_SWEEP_BUDGET_MS="${EVAL_BUDGET_MS:-3000}"
export MEMPLACE_SWEEP_REPEAT="${EVAL_REPEAT:-10}" MEMPLACE_SWEEP_WARMUP="${EVAL_WARMUP:-2}"
# Placements not compiled in run as just-in-time instantiations (compiled before the timed
# launches), as the Placer runs them; EVAL_JIT=auto measures them through the dynamic accessor.
export MEMPLACE_JIT="${EVAL_JIT:-always}" MEMPLACE_JIT_CACHE="$work/jit"
# A second spec (prepare.py --compare-spec: the probed H100 spec) ranks every plan too.
compare_spec=""
[[ -f "$carry/eval/compare.msl" ]] && compare_spec="$carry/eval/compare.msl"
for line in "${caselines[@]}"; do
  read -r prog input orig <<<"$line"
  [[ "$orig" == "-" ]] && orig=""
  tag="${prog}__${input}"
  if (($(elapsed) > deadline)); then
    echo "$tag skipped: deadline" >>"$work/runs/skipped.txt"
    say "$tag skipped (deadline)"
    continue
  fi
  [[ -x "$work/rw/$prog" ]] || { echo "$tag skipped: no build" >>"$work/runs/skipped.txt"; continue; }
  s=$(date +%s%3N)
  mkdir -p "$work/traces/$tag"
  MEMPLACE_SWEEP_OUT="$work/runs/sweep_$tag.jsonl" MEMPLACE_REPORT="$work/runs/report_$tag.json" \
    MEMPLACE_TRACE_DIR="$work/traces/$tag" \
    MEMPLACE_SWEEP_ORIGINAL="$orig" MEMPLACE_SWEEP_COMPARE_SPEC="$compare_spec" \
    timeout "${EVAL_CASE_TIMEOUT_S:-90}" "$work/rw/$prog" --input "$input" \
    --repeat "${EVAL_PROGRAM_REPEAT:-30}" \
    >"$work/runs/run_$tag.json" 2>"$work/runs/run_$tag.err"
  rc=$?
  ms=$(($(date +%s%3N) - s))
  echo "$tag $rc $ms" >>"$work/runs/walls.txt"
  say "$tag rc=$rc ${ms}ms $(grep -c '"type":"placement"' "$work/runs/sweep_$tag.jsonl" 2>/dev/null) placements"
done

# ---- 3. results ------------------------------------------------------------------------------
cp "$carry/eval/cases.json" "$work/runs/"
tar czf "$out/raw.tgz" -C "$work" runs rw/build.txt 2>/dev/null
python3 "$carry/eval/collect.py" "$work/runs" "$work/csv" >"$work/summary.txt" 2>&1
cp "$work/csv/placements.csv" "$work/csv/cases.csv" "$out/"
# The Placer's traces (binary), for re-running the engine offline (memplace place): kept when
# they compress to at most 15 MB.
tar -I "xz -T0 -3" -cf "$out/traces.tar.xz" -C "$work" traces 2>/dev/null
if (($(stat -c %s "$out/traces.tar.xz" 2>/dev/null || echo 0) > 15000000)); then
  say "traces: $(du -sh "$work/traces" | cut -f1), too large to bring back"
  rm -f "$out/traces.tar.xz"
fi
if python3 "$carry/eval/analyze.py" "$out" --plots "$work/plots" >>"$log" 2>&1; then
  tar czf "$out/plots.tgz" -C "$work" plots
else
  say "plots failed (see the log)"
fi
say "done"
cat "$work/summary.txt"
