#!/usr/bin/env bash
# ctest demo_rewritten_current: the reviewed copies in examples/demo/rewritten/ (what the demo
# builds from on a machine without a CUDA toolkit) are what `memplace rewrite` writes today.
#   check_rewritten.sh MEMPLACE OUTDIR        (exit 77: no CUDA installation to parse against)
# After a rewriter change: examples/demo/check_rewritten.sh build/bin/memplace /tmp/x --update
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
memplace="$1"
out="$2"
update="${3:-}"
mkdir -p "$out/full" "$out/launches-only"
status=0
for f in spmv.cu particle_filter.cu; do
  for kind in full launches-only; do
    flag=(); ref="$here/rewritten/$f"
    if [[ $kind == launches-only ]]; then flag=(--launches-only); ref="$here/rewritten/launches-only/$f"; fi
    if ! "$memplace" rewrite "$here/$f" -o "$out/$kind" --force "${flag[@]}" -- -I"$here" >"$out/$kind/$f.log" 2>&1; then
      if grep -q "no CUDA installation" "$out/$kind/$f.log"; then echo "SKIP: no CUDA installation"; exit 77; fi
      cat "$out/$kind/$f.log"; exit 1
    fi
    if [[ "$update" == --update ]]; then
      mkdir -p "$(dirname "$ref")"; cp "$out/$kind/$f" "$ref"; echo "updated $ref"
    elif ! diff -u "$ref" "$out/$kind/$f"; then
      echo "FAIL: $ref is stale; review and run: $0 $memplace $out --update"; status=1
    fi
  done
done
[[ $status -eq 0 ]] && echo "the reviewed copies in examples/demo/rewritten/ are current"
exit $status
