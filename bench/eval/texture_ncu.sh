#!/usr/bin/env bash
# Nsight Compute on kernels whose texture placement the model ranks wrongly (decision 021:
# texture measured faster than global in gathers and stencils, slower in streams):
# the rewritten program under MEMPLACE=off (the placement as written) and with one array forced
# to a texture, one profiled launch each after the warm-ups. Needs a prepared evaluation folder
# (bench/eval/prepare.py --carry DIR). Results under ${OUT:-out/texture_ncu}.
#   bash bench/eval/texture_ncu.sh out/gpu/eval
set -uo pipefail
. "$(dirname "$0")/ncu_common.sh"
ncu_prepare "$1" out/texture_ncu conv2d cfd scan mm spmv
# program input kernel array
cases=(
  "conv2d hd conv2d in"
  "cfd grid compute_flux variables"
  "scan odd scan_reduce in"
  "mm medium matmul A"
  "spmv powerlaw spmv_csr_vector colIdx"
)
metrics="l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct,l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,l1tex__t_requests_pipe_tex_mem_texture.sum,l1tex__t_sectors_pipe_tex_mem_texture.sum,l1tex__t_sector_pipe_tex_mem_texture_hit_rate.pct,l1tex__f_wavefronts.sum,l1tex__m_xbar2l1tex_read_sectors.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,gpu__time_duration.sum,smsp__inst_executed.sum,sm__inst_executed_pipe_tex.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_tex_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,l1tex__texin_sm2tex_req_cycles_active.avg.pct_of_peak_sustained_elapsed,l1tex__lsuin_requests.sum"
for c in "${cases[@]}"; do
  read -r prog input kernel array <<<"$c"
  for mode in off "force:$array=texture"; do
    tag="${prog}_${input}_${mode//[:=]/_}"
    # A placement not compiled in runs as its just-in-time instantiation (from 2026-11-26; the
    # 2026-11-25 run did not ask: a forced placement not compiled in may have run dynamic).
    MEMPLACE="$mode" MEMPLACE_QUIET=1 MEMPLACE_JIT=always MEMPLACE_JIT_SYNC=1 \
      timeout 300 ncu --clock-control none -k "regex:^$kernel" \
      --launch-skip 3 --launch-count 1 --metrics "$metrics" --csv \
      "$work/$prog" --input "$input" --warmup 2 --repeat 3 >"$out/$tag.csv" 2>"$out/$tag.err"
    echo "$tag rc=$?"
  done
done
PYTHONPATH="$(dirname "$0")" python3 - "$out" <<'PY'
import sys
from ncu_csv import load
runs = load(sys.argv[1])
tags = sorted(runs)
for m in sorted({m for r in runs.values() for m in r}):
    print(m, *("%s=%s" % (t, runs[t].get(m, "-")) for t in tags), sep="\n  ")
PY
