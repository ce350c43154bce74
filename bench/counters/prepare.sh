#!/usr/bin/env bash
# Prepares the model-against-ncu comparison (README.md beside this): for every program of
# cases.txt, rewrite it (memplace rewrite), build it for the CPU emulation layer with the Placer
# and trace every case's launch in full (MEMPLACE=trace, every block of the grid), and build it
# with nvcc for sm_90 (the runtime, no Placer) for ncu on the GPU.
#   prepare.sh OUTDIR [BUILD_DIR] [PROGRAM...]
# OUTDIR/rw/P.cu        rewritten sources
# OUTDIR/emu/P          emulated programs;  OUTDIR/traces/CASE/*.trace  full traces
# OUTDIR/gpu/P          sm_90 programs (cudart static); OUTDIR/gpu/orig_P the original sources
# SKIP_GPU=1 skips the nvcc builds, SKIP_EMU=1 the emulated builds and traces.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${MEMPLACE_ROOT:-$(cd "$here/../.." && pwd)}
out=${1:?usage: prepare.sh OUTDIR [BUILD_DIR] [PROGRAM...]}
build=${2:-$root/build}
shift $(( $# >= 2 ? 2 : 1 ))
mkdir -p "$out"/{rw,emu,gpu,traces,obj}
out=$(cd "$out" && pwd)
lib=$build/lib
memplace=$build/bin/memplace

progs=$(awk '!/^#/ && NF {print $2}' "$here/cases.txt" | sort -u | tr '\n' ' ')
[ $# -gt 0 ] && progs="$*"

for p in $progs; do
    [ -f "$out/rw/$p.cu" ] && [ "$out/rw/$p.cu" -nt "$root/bench/kernels/$p.cu" ] && continue
    "$memplace" rewrite --force "$root/bench/kernels/$p.cu" -o "$out/rw" -- -I "$root/bench/kernels" >/dev/null
done

if [ "${SKIP_EMU:-0}" != 1 ]; then
    for p in $progs; do
        if [ ! -x "$out/emu/$p" ] || [ "$out/rw/$p.cu" -nt "$out/emu/$p" ] || [ "$lib/libmemplace_placer_emu.a" -nt "$out/emu/$p" ]; then
            clang++-19 -std=c++20 -O2 -w -I"$root/emu/include" -include memplace/emu/cuda_emu.h \
                -I"$root" -I"$root/runtime/include" -I"$root/bench/kernels" -x c++ "$out/rw/$p.cu" -x none \
                -L"$lib" -Wl,--undefined=memplace_placer_autoinstall -lmemplace_placer_emu \
                -lmemplace_runtime_emu -lmemplace_search -lmemplace_model -lmemplace_trace \
                -lmemplace_runtime_core -lmemplace_emu -lmemplace_spec -lmemplace_common \
                /usr/lib/x86_64-linux-gnu/libboost_context.a -pthread -ldl -rdynamic -o "$out/emu/$p"
        fi
    done
    # Every case's launch traced in full: every block (132 SMs x up to 2^20 blocks each). Cases
    # of one program and arguments share a trace (traces/PROGRAM_INPUT_SIZE): the placement is
    # the model's to vary.
    while read -r name prog rest; do
        case "$name" in ''|'#'*) continue ;; esac
        [[ " $progs " == *" $prog "* ]] || continue
        read -r _ input _ size _ <<<"$rest"
        d="$out/traces/${prog}_${input}_${size}"
        ls "$d"/*.trace >/dev/null 2>&1 && continue
        mkdir -p "$d"
        echo "tracing $prog --input $input --size $size" >&2
        MEMPLACE=trace MEMPLACE_TRACE_DIR="$d" MEMPLACE_TRACE_SMS=132 MEMPLACE_TRACE_BLOCKS=1048576 \
        MEMPLACE_TRACE_RECORDS=4000000 MEMPLACE_QUIET=1 MEMPLACE_REPORT="$d/report.json" \
            "$out/emu/$prog" --input "$input" --size "$size" --warmup 0 --repeat 1 >"$d/run.json"
    done <"$here/cases.txt"
fi

if [ "${SKIP_GPU:-0}" != 1 ]; then
    NVCC=${NVCC:-nvcc}
    flags=(-std=c++20 -O3 -arch=sm_90 -I"$root" -I"$root/runtime/include" -I"$root/bench/kernels" -w)
    objs=()
    for s in "$root"/runtime/src/*.cpp "$root/common/place.cpp"; do
        o="$out/obj/$(basename "$s" .cpp).o"
        [ -f "$o" ] && [ "$o" -nt "$s" ] || "$NVCC" "${flags[@]}" -c "$s" -o "$o"
        objs+=("$o")
    done
    for p in $progs; do
        [ -x "$out/gpu/$p" ] && [ "$out/gpu/$p" -nt "$out/rw/$p.cu" ] && continue
        "$NVCC" "${flags[@]}" "$out/rw/$p.cu" "${objs[@]}" -Xcompiler=-static-libstdc++,-static-libgcc -o "$out/gpu/$p"
    done
    # the untouched originals (their hand placement: const __restrict__, __constant__)
    for p in $progs; do
        [ -x "$out/gpu/orig_$p" ] && [ "$out/gpu/orig_$p" -nt "$root/bench/kernels/$p.cu" ] && continue
        "$NVCC" -std=c++17 -O3 -arch=sm_90 -w -I"$root/bench/kernels" "$root/bench/kernels/$p.cu" \
            -Xcompiler=-static-libstdc++,-static-libgcc -o "$out/gpu/orig_$p"
    done
fi
echo "prepare.sh: done ($out)" >&2
