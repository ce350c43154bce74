#!/usr/bin/env bash
# Does a persisting L2 set-aside left raised by one kernel slow the program's later kernels?
# (decision 016). For a GPU machine, on a carry folder made by
#   python3 bench/eval/prepare.py --carry DIR --programs scan,triad,radixsort
# it builds each program as written and rewritten, and runs, each on its large input:
#   original    the program as written (no memplace);
#   off         rewritten, MEMPLACE=off (the placement as written);
#   keep        rewritten, one array of an earlier kernel forced to l2persist, the set-aside
#               left raised afterwards (MEMPLACE_L2_LIMIT=keep: the runtime before the fix);
#   restore     the same with the runtime's default: the set-aside restored before the next
#               kernel that places nothing there.
# Prints each kernel's median (the programs' own CUDA-event timing) per configuration.
#   l2limit_experiment.sh DIR [OUT]
set -uo pipefail
carry="$(cd "$1" && pwd)"
out="${2:-${OUT:-/tmp/l2limit}}"
mkdir -p "$out"
work="$(mktemp -d)"
libs=""
for l in placer runtime runtime_core search model trace spec common; do
  libs+=" $carry/lib/libmemplace_$l.a"
done
declare -A force=(
  [scan]="scan_reduce.in=l2persist"
  [radixsort]="radix_histogram.keys=l2persist"
  [triad]="triad.a=l2persist"
)
declare -A input=([scan]=large [radixsort]=large [triad]=medium)
for p in scan radixsort triad; do
  nvcc -O3 -arch=sm_90 -std=c++17 -I"$carry/kernels" -o "$work/$p.orig" "$carry/kernels/$p.cu" &
  (nvcc -std=c++20 -O3 -arch=sm_90 -I"$carry/include" -I"$carry/kernels" -c "$carry/src/$p.cu" \
     -o "$work/$p.o" &&
     nvcc -arch=sm_90 -Xcompiler=-static-libstdc++,-static-libgcc \
       -Xlinker --undefined=memplace_placer_autoinstall "$work/$p.o" $libs -lpthread \
       -o "$work/$p.rw") &
done
wait
for p in scan radixsort triad; do
  in="${input[$p]}"
  run() { # name, command...
    local name="$1"
    shift
    env MEMPLACE_QUIET=1 "$@" --input "$in" >"$out/$p.$name.json" 2>"$out/$p.$name.err"
    echo "$p $in $name: $(python3 -c "
import json, sys
d = json.load(open('$out/$p.$name.json'))
k = d.get('kernel_ms') or d.get('kernels') or {}
print(' '.join('%s %.4f' % (n, v) for n, v in (k.items() if isinstance(k, dict) else [])) or d)
" 2>/dev/null)"
  }
  run original "$work/$p.orig"
  run off env MEMPLACE=off "$work/$p.rw"
  run keep env MEMPLACE="force:${force[$p]}" MEMPLACE_L2_LIMIT=keep "$work/$p.rw"
  run restore env MEMPLACE="force:${force[$p]}" "$work/$p.rw"
done | tee "$out/summary.txt"
rm -rf "$work"
