#!/usr/bin/env bash
# Nsight Compute on kernels whose persisting-window placements the model ranks wrongly
# (decision 026: windows slower than predicted over gathered or large arrays,
# faster over streamed arrays kept between launches). Each case runs the rewritten program twice
# with every array of the kernel forced: as written, and with one array in an L2 persisting
# window; one launch profiled after the warm-ups, caches not flushed (the window's effect across
# launches is the point), whole-application replay so that every metric pass starts alike.
# Needs a prepared evaluation folder (bench/eval/prepare.py --carry DIR). Results under
# ${OUT:-out/window_ncu} (window_ncu.tgz); a table last.
#   bash bench/eval/window_ncu.sh out/gpu/eval
# WINDOW_NCU_SET=l2 profiles the L2's own counters instead of the traffic: the lts__ metrics this
# ncu offers for the L2 fabric between the two partitions, lookups by hit and miss, and the
# eviction classes (persisting lines are evict-last); the list it chose is written beside the
# results (metrics.txt), with every lts__ metric the chip has (lts_metrics.txt).
set -uo pipefail
. "$(dirname "$0")/ncu_common.sh"
ncu_prepare "$1" out/window_ncu spmv md scan hydro_control triad hydro_force particlefilter
# program input kernel window-array placement-as-written
cases=(
  "spmv random spmv_csr_vector rowPtr colIdx=readonly,rowPtr=readonly,val=readonly,x=readonly,y=global"
  "md shuffled md_lj_force position force=global,neighList=readonly,position=readonly"
  "scan odd scan_bottom in blockSums=readonly,in=readonly,out=global"
  "hydro_control region hydro_monotonic_q qq delv_eta=readonly,delv_xi=readonly,delv_zeta=readonly,delx_eta=readonly,delx_xi=readonly,delx_zeta=readonly,elemBC=readonly,elemMass=readonly,letam=readonly,letap=readonly,lxim=readonly,lxip=readonly,lzetam=readonly,lzetap=readonly,ql=global,qq=global,regElemlist=readonly,vdov=readonly,vnew=readonly,volo=readonly"
  "triad medium triad b a=global,b=readonly,c=readonly"
  "hydro_force shuffled hydro_fb_hourglass_force xd determ=readonly,dvdx=readonly,dvdy=readonly,dvdz=readonly,elemMass=readonly,fx_elem=global,fy_elem=global,fz_elem=global,nodelist=readonly,ss=readonly,x8n=readonly,xd=readonly,y8n=readonly,yd=readonly,z8n=readonly,zd=readonly"
  "spmv banded spmv_csr_vector rowPtr colIdx=readonly,rowPtr=readonly,val=readonly,x=readonly,y=global"
  "spmv blockdiag spmv_csr_vector rowPtr colIdx=readonly,rowPtr=readonly,val=readonly,x=readonly,y=global"
  "particlefilter p16m find_index arrayX CDF=readonly,u=readonly,arrayX=readonly,arrayY=readonly,xj=global,yj=global"
)
metrics="gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sector_op_read_hit_rate.pct,lts__t_sector_op_write_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum"
if [[ "${WINDOW_NCU_SET:-traffic}" == l2 ]]; then
  ncu --query-metrics --chip gh100 2>&1 | awk '$1 ~ /^lts__/ {print $1}' | sort -u >"$out/lts_metrics.txt"
  l2=""
  for m in lts__t_sectors_srcunit_ltcfabric_op_read lts__t_sectors_srcunit_ltcfabric_op_read_lookup_hit \
    lts__t_sectors_srcunit_ltcfabric_op_write lts__t_sectors_srcunit_ltcfabric_evict_last \
    lts__t_sectors_srcunit_ltcfabric_evict_normal lts__ltcfabric2lts_cycles_active \
    lts__ltcfabric2lts_cycles_stalled lts__t_sectors_srcunit_tex_op_read \
    lts__t_sectors_srcunit_tex_op_read_lookup_hit lts__t_requests_aperture_device_evict_last \
    lts__t_requests_aperture_device_evict_last_lookup_hit \
    lts__t_requests_aperture_device_evict_last_lookup_miss \
    lts__t_requests_aperture_device_evict_normal_lookup_hit \
    lts__t_requests_aperture_device_evict_normal_lookup_miss lts__d_sectors_fill_device; do
    grep -qx "$m" "$out/lts_metrics.txt" && l2+="${l2:+,}$m.sum"
  done
  metrics="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum${l2:+,$l2}"
  tr ',' '\n' <<<"$metrics" >"$out/metrics.txt"
fi
qualify() { # kernel "a=p,b=q" -> "kernel.a=p,kernel.b=q"
  local k="$1" s="$2"
  echo "$k.${s//,/,$k.}"
}
for c in "${cases[@]}"; do
  read -r prog input kernel array written <<<"$c"
  # WINDOW_NCU_CASES="scan_odd md_shuffled": only those program_input cases
  [[ -z "${WINDOW_NCU_CASES:-}" || " $WINDOW_NCU_CASES " == *" ${prog}_${input} "* ]] || continue
  windowed="$(sed -E "s/(^|,)$array=[a-z0-9]+/\\1$array=l2persist/" <<<"$written")"
  for mode in written window; do
    placement="$written"
    [[ $mode == window ]] && placement="$windowed"
    tag="${prog}_${input}_${mode}"
    # A placement not compiled in runs as its just-in-time instantiation, compiled before the
    # first launch (as the sweep runs it), not through the dynamic accessor.
    MEMPLACE="force:$(qualify "$kernel" "$placement")" MEMPLACE_TUNE=0 MEMPLACE_QUIET=1 \
      MEMPLACE_JIT=always MEMPLACE_JIT_SYNC=1 \
      timeout 240 ncu --clock-control none --cache-control none --replay-mode application \
      -k "regex:^$kernel\$" --launch-skip 3 --launch-count 1 --metrics "$metrics" --csv \
      "$work/$prog" --input "$input" --warmup 2 --repeat 3 >"$out/$tag.csv" 2>"$out/$tag.err"
    echo "$tag rc=$? ($array)"
  done
done
PYTHONPATH="$(dirname "$0")" python3 - "$out" "${WINDOW_NCU_SET:-traffic}" <<'PY'
import sys
from ncu_csv import load, number
runs = load(sys.argv[1])
if sys.argv[2] == "l2":
    names = sorted({m for r in runs.values() for m in r if m != "Kernel Name"})
    for m in names:
        print("%-62s" % m[:62] + "".join("%10.4g" % number(runs[t].get(m)) for t in sorted(runs)))
    print("columns: " + " ".join(sorted(runs)))
    sys.exit(0)
cols = [("gpu__time_duration.sum", "time", 1e-3, "us"),
        ("lts__t_sector_op_read_hit_rate.pct", "L2 rd hit", 1, "%"),
        ("lts__t_sector_op_write_hit_rate.pct", "L2 wr hit", 1, "%"),
        ("lts__t_sectors_op_read.sum", "L2 rd sect", 1e-6, "M"),
        ("dram__bytes_read.sum", "DRAM rd", 1e-6, "MB"),
        ("dram__bytes_write.sum", "DRAM wr", 1e-6, "MB")]
print("%-34s" % "case" + "".join("%13s" % (c[1] + " " + c[3]) for c in cols) + "  dispatch")
for tag in sorted(runs):
    dispatch = "dynamic" if "DynamicAccessor" in runs[tag].get("Kernel Name", "") else "compiled"
    print("%-34s" % tag + "".join("%13.1f" % (number(runs[tag].get(m)) * s) for m, _, s, _ in cols)
          + "  " + dispatch)
PY
# One archive: the device tool brings back a few files per call.
(cd "$out" && tar czf window_ncu.tgz ./*.csv ./*.err ./*.txt 2>/dev/null && rm -f ./*.csv ./*.err)
