#!/usr/bin/env bash
# Builds and runs place_cost_probe.cu on the device machine, then profiles the texture and LDG
# chunk loops (40 MB, 4-byte) with Nsight Compute. Results under ${OUT:-out/place_cost}.
#   bash bench/eval/place_cost_probe.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-out/place_cost}"
mkdir -p "$out"
nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -o "$out/place_cost_probe" "$here/place_cost_probe.cu"
"$out/place_cost_probe" >"$out/place_cost.csv" 2>"$out/device.txt"
cat "$out/device.txt"
cat "$out/place_cost.csv"
if command -v ncu >/dev/null; then
  # The first u32 chunk loops run on the 40 MB array: one launch of each after its warm-ups.
  for k in chunkLdg chunkTex; do
    ncu --clock-control none -k regex:"$k" --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
      --section LaunchStats "$out/place_cost_probe" >>"$out/ncu.txt" 2>&1 || true
  done
  grep -E "chunk|Duration|Throughput|Hit Rate|Stall|Warp Cycles|Registers|L1/TEX|Issued" \
    "$out/ncu.txt" | head -120
fi
