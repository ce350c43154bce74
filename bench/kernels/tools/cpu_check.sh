#!/usr/bin/env bash
# Builds the benchmark programs of bench/kernels/ against the CPU shim (tools/cpu_shim/) and runs
# each on its tiny inputs with --check, as listed in tools/cpu_check.list. For machines without
# a GPU: it tests the host code, the generators, the CPU references and the kernels' logic (one
# OS thread per CUDA thread), not GPU behaviour or speed.
#
#   tools/cpu_check.sh [-o BUILD_DIR] [PROGRAM...]     (default: every program in the list)
# Exit 0 when every run passes its check, 1 otherwise.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kernels=$(dirname "$here")
out=${TMPDIR:-/tmp}/memplace-bench-cpu
if [ "${1:-}" = "-o" ]; then out=$2; shift 2; fi
mkdir -p "$out"
cxx=${CXX_SHIM:-$(command -v clang++-19 || command -v clang++ || command -v g++)}

wanted=" $* "
fail=0
declare -A built
while read -r prog args; do
    case "$prog" in ''|'#'*) continue ;; esac
    if [ $# -gt 0 ] && [[ "$wanted" != *" $prog "* ]]; then continue; fi
    if [ -z "${built[$prog]:-}" ]; then
        # kernel<<<grid, block>>>(args) -> shim::launch(grid, block)(kernel, args)
        perl -0pe 's/(\w+)<<<(.*?)>>>\(/shim::launch($2)($1, /gs' "$kernels/$prog.cu" >"$out/$prog.cpp"
        if ! "$cxx" -std=c++20 -O2 -w -x c++ -I "$here/cpu_shim" -I "$kernels" \
            -include "$here/cpu_shim/cuda_runtime.h" -o "$out/$prog" "$out/$prog.cpp" -lboost_context; then
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
