#!/usr/bin/env bash
# The main job on the bundled example, as far as the pipeline goes today. `make demo` runs it.
# Today: the built-in H100 spec, the transactions a few warp accesses need in each of its
# software-managed memories, and the placement memplace chooses for the example traces.
set -euo pipefail
build=${1:-build}
memplace="$build/bin/memplace"

echo "== The built-in H100 spec (memplace spec show h100) =="
"$memplace" spec show h100
echo
echo "== Transactions of one warp access, 4-byte elements (memplace spec eval h100 ...) =="
"$memplace" spec eval h100 --access stride:1 --access same --access stride:2 \
  --access stride:32 --access random:7
echo
for k in poly_eval table_lookup saxpy; do
  echo "== Placement of examples/traces/$k.trace on H100 (memplace place ... --spec h100) =="
  "$memplace" place "examples/traces/$k.trace" --spec h100 --top 3
  echo
done
echo "== Every example: chosen placement per search algorithm =="
for k in poly_eval table_lookup saxpy spmv_csr jacobi2d many_arrays; do
  for s in bnb greedy rules; do
    "$memplace" place "examples/traces/$k.trace" --spec h100 --search "$s" --brief
  done
done
