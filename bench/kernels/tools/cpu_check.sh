#!/usr/bin/env bash
# Builds the benchmark programs of bench/kernels/ for memplace's CPU CUDA layer (emu/,
# docs/emulation.md) and runs each on its tiny inputs with --check, as listed in
# tools/cpu_check.list. For machines without a GPU: it tests the host code, the generators, the
# CPU references and the kernels' logic, not GPU behaviour or speed.
#
#   tools/cpu_check.sh [-o BUILD_DIR] [-c MEMPLACE_EMU_CXX] [PROGRAM...]
#   (default: every program in the list; the compiler script defaults to build/bin/memplace-emu-c++)
# Exit 0 when every run passes its check, 1 otherwise.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kernels=$(dirname "$here")
out=${TMPDIR:-/tmp}/memplace-bench-cpu
if [ "${1:-}" = "-o" ]; then out=$2; shift 2; fi
mkdir -p "$out"
cxx=$(cd "$kernels/../.." && pwd)/build/bin/memplace-emu-c++
if [ "${1:-}" = "-c" ]; then cxx=$2; shift 2; fi
[ -x "$cxx" ] || { echo "cpu_check.sh: no emulator compiler at $cxx (build memplace first)" >&2; exit 1; }

wanted=" $* "
fail=0
declare -A built
while read -r prog args; do
    case "$prog" in ''|'#'*) continue ;; esac
    if [ $# -gt 0 ] && [[ "$wanted" != *" $prog "* ]]; then continue; fi
    if [ -z "${built[$prog]:-}" ]; then
        # kernel<<<grid, block>>>(args) -> ::memplace::emu::chevrons(grid, block)(kernel, args)
        perl -0pe 's/(\w+)<<<(.*?)>>>\(/::memplace::emu::chevrons($2)($1, /gs' "$kernels/$prog.cu" >"$out/$prog.cu"
        if ! "$cxx" -O2 -w -I "$kernels" -o "$out/$prog" "$out/$prog.cu"; then
            echo "FAIL build $prog"; fail=1; built[$prog]=failed; continue
        fi
        built[$prog]=ok
    fi
    [ "${built[$prog]}" = ok ] || continue
    # shellcheck disable=SC2086
    if line=$(timeout 300 "$out/$prog" $args --check --repeat 1 --warmup 0); then
        echo "ok   $prog $args"
    else
        echo "FAIL $prog $args: $line"; fail=1
    fi
done <"$here/cpu_check.list"
exit $fail
