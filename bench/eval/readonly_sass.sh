#!/usr/bin/env bash
# Where nvcc puts the particle filter's loads relative to its stores, by which arrays use the
# read-only accessor: compiles bench/eval/readonly_sass.cu for sm_90 and prints, per
# instantiation, its LDG and STG instructions in program order. Needs nvcc and cuobjdump (the
# device machine has both). Results under ${OUT:-out/readonly_sass}.
#   bash bench/eval/readonly_sass.sh [INCLUDE_DIR]    (default runtime/include; common/ from the root)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
inc="${1:-$root/runtime/include}"
out="${OUT:-out/readonly_sass}"
mkdir -p "$out"
nvcc -std=c++20 -O3 -arch=sm_90 -I"$inc" -I"$root" -cubin -o "$out/readonly_sass.cubin" \
  "$here/readonly_sass.cu"
cuobjdump -sass "$out/readonly_sass.cubin" | cu++filt >"$out/readonly_sass.sass"
awk '/Function :/ { sub(/.*find_index</, "find_index<"); print; next }
     /LDG|STG/ { print "   " $0 }' "$out/readonly_sass.sass" |
  sed -E 's#/\* 0x[0-9a-f]+ \*/##; s/ +/ /g; s/memplace::([A-Za-z0-9]+)Accessor<(const )?float>/\1/g'
