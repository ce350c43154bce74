# Sourced by the Nsight Compute scripts of bench/eval (texture_ncu.sh, window_ncu.sh): builds an
# evaluation program from a prepared carry folder (bench/eval/prepare.py --carry DIR) with nvcc,
# linked with the Placer, and reads ncu's CSVs back (ncu_csv.py).
#   ncu_prepare CARRY DEFAULT_OUT PROGRAM...
#       sets carry (absolute), out (${OUT:-DEFAULT_OUT}, created) and work (a new temporary
#       folder), and builds the programs there in parallel
#   ncu_build CARRY WORK PROGRAM     -> WORK/PROGRAM
ncu_prepare() {
  carry="$(cd "$1" && pwd)"
  out="${OUT:-$2}"
  shift 2
  mkdir -p "$out"
  work="$(mktemp -d)"
  local p
  for p in "$@"; do ncu_build "$carry" "$work" "$p" & done
  wait
}
ncu_build() {
  local carry="$1" work="$2" prog="$3" libs="" l
  for l in placer runtime runtime_core search model trace spec common; do
    libs+=" $carry/lib/libmemplace_$l.a"
  done
  # shellcheck disable=SC2086 # one word per library
  nvcc -std=c++20 -O3 -arch=sm_90 -I"$carry/include" -I"$carry/kernels" -c "$carry/src/$prog.cu" \
    -o "$work/$prog.o" && nvcc -arch=sm_90 -Xcompiler=-static-libstdc++,-static-libgcc \
    "$work/$prog.o" $libs -lpthread -o "$work/$prog"
}
