#!/usr/bin/env bash
# Aliasing (docs/placer.md, "Aliasing"): the rewritten aliasing program
# (tests/frontend/kernels/aliasing.cu: read-only parameters pointing at a __device__ array the
# kernel writes by name, whole or a sub-range, directly or in a helper; one buffer passed twice,
# through one or two host variables; sub-ranges of one buffer; writes through a structure's
# pointer and a __device__ pointer variable) under MEMPLACE=auto (twice: decided, then from the
# decision cache), under MEMPLACE=sweep, and with every read-only parameter forced into each
# place that copies memory, bitwise against MEMPLACE=off; the forced runs' fallbacks must name
# what the parameter may alias.
#   alias_test.sh PROGRAM OUTDIR     (the same under emulation and on a GPU)
set -uo pipefail
prog="${1:?usage: alias_test.sh PROGRAM OUTDIR}"
out="${2:?usage: alias_test.sh PROGRAM OUTDIR}"
ERR_FILTER='^memplace: .*placed global' # the forced runs' expected fallbacks
source "$(dirname "$0")/bitwise_runs.sh"

run auto MEMPLACE=auto MEMPLACE_REPORT="$out/auto.json"
run auto-cached MEMPLACE=auto MEMPLACE_REPORT="$out/auto-cached.json"
# Every placement measured on each launch's own arguments: the global updated by name is
# restored before each, and kernels writing through unknown pointers are not swept.
run sweep MEMPLACE=sweep MEMPLACE_SWEEP_OUT="$out/sweep.jsonl" MEMPLACE_CACHE="$out/sweep-cache"
kernels=(from_global via_helper twice via_struct via_device_pointer)
for place in shared constant texture readonly; do
  force="force:"
  for k in "${kernels[@]}"; do
    force+="$k.in=$place,"
  done
  run "force-$place" MEMPLACE="${force%,}"
  run "force-$place-dynamic" MEMPLACE="${force%,}" MEMPLACE_DISPATCH=dynamic
done

# Traced launches are shadow launches (docs/placer.md): arguments into one buffer point into one
# scratch copy, so the traced run of `twice` reads its own writes as the original does and no
# outputs differ (none of these kernels races).
if grep -q "outputs differ" "$out/auto.err"; then
  echo "FAIL: a traced run's outputs differed from the original's:"
  grep "outputs differ" "$out/auto.err"
  status=1
fi

# Every kernel's `in` fell back to global, saying why.
expect() { # kernel reason-fragment
  if ! grep -q "^memplace: $1: array in requested shared, placed global: .*$2" \
       "$out/force-shared.err"; then
    echo "FAIL: no fallback of $1.in naming \"$2\" in $out/force-shared.err"
    status=1
  fi
}
expect from_global "the global 'g_buf', which the kernel writes by name"
expect via_helper "the global 'g_help', which the kernel writes by name"
expect twice "share memory with 'io'"
expect via_struct "writes through a pointer whose target is unknown"
expect via_device_pointer "writes through a pointer whose target is unknown"
[[ $status -eq 0 ]] && echo "PASS: every run bitwise equal to MEMPLACE=off"
exit $status
