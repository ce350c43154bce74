#!/usr/bin/env bash
# Tries to reproduce the one crash of the 2026-11-25 06:56 evaluation: hydro_force `large` under
# MEMPLACE=sweep ended with SIGSEGV (rc 139) after printing its results, before the Placer's
# report was written. Runs the case 4 times with the evaluation's environment, then once under
# cuda-gdb (backtraces of every thread if it crashes). On the device machine, after
# bench/prepare_gpu.sh: `bash bench/eval/exit_crash_repro.sh` (results under $OUT).
# Not reproduced in 8 runs on 2026-11-25; exit_crash_core.sh (the whole evaluation with core
# dumps) found the cause (docs/NOTES.md, "NVRTC is initialised before the exit wait").
set -u
carry=out/gpu/eval
out=${OUT:-/tmp/crash}
mkdir -p $out
w=$(mktemp -d)
libs="$carry/lib/libmemplace_placer.a $carry/lib/libmemplace_runtime.a $carry/lib/libmemplace_runtime_core.a $carry/lib/libmemplace_search.a $carry/lib/libmemplace_model.a $carry/lib/libmemplace_trace.a $carry/lib/libmemplace_spec.a $carry/lib/libmemplace_common.a"
nvcc -std=c++20 -O3 -g -arch=sm_90 -I$carry/include -I$carry/kernels -c $carry/src/hydro_force.cu -o $w/h.o && nvcc -arch=sm_90 -g -Xcompiler=-static-libstdc++,-static-libgcc -Xlinker --undefined=memplace_placer_autoinstall $w/h.o $libs -lpthread -o $w/h || exit 1
export MEMPLACE_SWEEP_ORIGINAL="$(python3 -c "import json;print(json.load(open('$carry/eval/cases.json'))['originals']['hydro_force'])")" MEMPLACE_SWEEP_COMPARE_SPEC=$PWD/$carry/eval/compare.msl
export MEMPLACE=sweep MEMPLACE_TIME=1 MEMPLACE_QUIET=1 MEMPLACE_SWEEP_MAX=64 MEMPLACE_SWEEP_BUDGET_MS=4000 MEMPLACE_SWEEP_REPEAT=10 MEMPLACE_SWEEP_WARMUP=2 MEMPLACE_JIT=always
for i in 1 2 3 4; do
  rm -rf $w/jit; export MEMPLACE_JIT_CACHE=$w/jit
  MEMPLACE_SWEEP_OUT=$w/s$i.jsonl MEMPLACE_REPORT=$out/report$i.json MEMPLACE_TRACE_DIR=$w/t$i timeout 120 $w/h --input large --repeat 20 >$out/run$i.json 2>$out/run$i.err
  echo "run $i rc=$?"
done
rm -rf $w/jit; export MEMPLACE_JIT_CACHE=$w/jit
MEMPLACE_SWEEP_OUT=$w/g.jsonl MEMPLACE_REPORT=$out/reportg.json MEMPLACE_TRACE_DIR=$w/tg timeout 200 cuda-gdb -q -batch -ex run -ex "thread apply all bt 12" --args $w/h --input large --repeat 20 >$out/gdb.txt 2>&1
echo "gdb rc=$?"
grep -n -A30 "SIGSEGV\|signal" $out/gdb.txt | head -80
which gdb cuda-gdb
