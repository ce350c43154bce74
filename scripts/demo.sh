#!/usr/bin/env bash
# The main job on the bundled example, as far as the pipeline goes today. `make demo` runs it.
# Today: the built-in H100 spec, and the transactions a few warp accesses need in each of its
# software-managed memories.
set -euo pipefail
build=${1:-build}
memplace="$build/bin/memplace"

echo "== The built-in H100 spec (memplace spec show h100) =="
"$memplace" spec show h100
echo
echo "== Transactions of one warp access, 4-byte elements (memplace spec eval h100 ...) =="
"$memplace" spec eval h100 --access stride:1 --access same --access stride:2 \
  --access stride:32 --access random:7
