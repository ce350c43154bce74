#!/usr/bin/env bash
# On the GPU machine (the device tool): ncu counters for every case, bundled for the way back.
#   run_on_gpu.sh BIN_DIR OUT [CASE...]     (OUT: the device tool's $OUT)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$1; out=$2; shift 2
w=$(mktemp -d)
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
  ncu --version; date -u; } >"$w/device.txt" 2>&1
cat "$w/device.txt"
ncu --query-metrics 2>&1 | grep -E '^(l1tex__t_(sector|request)|l1tex__m_|lts__t_sector|dram__sector|l1tex__data_(bank|pipe_lsu_wave)|idc__)' >"$w/query.txt"
chmod +x "$bin"/* 2>/dev/null
python3 "$here/ncu_collect.py" "$bin" "$w/ncu" "$@" 2>&1 | tee "$w/collect.log"
tar -C "$w" -czf "$out/results.tar.gz" .
cp "$w/collect.log" "$out/"
