#!/usr/bin/env bash
# Validates the benchmark programs on a GPU machine: builds every program with nvcc, runs each
# on all its inputs with --check (the first input and the large one first, the rest while time
# is left), runs compute-sanitizer memcheck on the first input of each and racecheck on the
# shared-memory kernels, and prints a summary last.
#
#   tools/validate_device.sh OUTDIR [SECONDS]     (default 150 s; SKIP_BUILD=1 keeps bin/)
# No run starts after SECONDS (each may take 45 s more), no sanitizer run after SECONDS + 20.
# Writes OUTDIR/results.jsonl (each program's JSON line plus "status" and "wall_s"),
# OUTDIR/summary.txt, OUTDIR/build.log and OUTDIR/sanitizer.log. Runs proceed six at a time,
# so the times in the lines are for information only: this checks correctness, not speed.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: validate_device.sh OUTDIR [SECONDS]}
budget=${2:-150}
mkdir -p "$out" bin
start=$(date +%s)
export deadline=$((start + budget))
programs=$(for f in ./*.cu; do basename "$f" .cu; done)

{
    echo "== device"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
    nvcc --version | tail -2
    echo "== build"
} | tee "$out/build.log"
if [ -z "${SKIP_BUILD:-}" ]; then
    echo "$programs" | xargs -P "$(nproc)" -I{} sh -c \
        'nvcc -O3 -arch=sm_90 -std=c++17 -I . -o bin/{} {}.cu >bin/{}.log 2>&1 && echo "built {}" || echo "BUILD FAILED {}"' \
        | tee -a "$out/build.log"
    for p in $programs; do cat "bin/$p.log"; done >>"$out/build.log"
fi
echo "build took $(($(date +%s) - start)) s" | tee -a "$out/build.log"

# The run list: phase 1 the first input and the large one of every program, phase 2 the others.
declare -A big=([particlefilter]=p16m [spmv]=random [cfd]=grid [bfs]=random)
phase1=()
phase2=()
for p in $programs; do
    [ -x "bin/$p" ] || continue
    first=""
    while IFS=$'\t' read -r name _; do
        if [ -z "$first" ]; then
            first=$name
            phase1+=("$p $name")
        elif [ "$name" = "${big[$p]:-large}" ]; then
            phase1+=("$p $name")
        else
            phase2+=("$p $name")
        fi
    done < <("bin/$p" --list-inputs)
done

run_one() { # program input
    local p=$1 in=$2 t0 line rc wall status
    if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "{\"kernel\":\"$p\",\"input\":\"$in\",\"status\":\"not run (time)\"}"
        return
    fi
    t0=$(date +%s%N)
    line=$(timeout 45 "bin/$p" --input "$in" --check --repeat 5 --warmup 1 2>"bin/$p.$in.err")
    rc=$?
    wall=$((($(date +%s%N) - t0) / 1000000))
    wall=$((wall / 1000)).$(printf '%03d' $((wall % 1000)))
    case $rc in
    0) status=pass ;;
    1) status=fail ;;
    124) status=timeout ;;
    *) status="error rc=$rc" ;;
    esac
    if [ -n "$line" ]; then
        echo "${line%\}},\"status\":\"$status\",\"wall_s\":$wall}"
    else
        echo "{\"kernel\":\"$p\",\"input\":\"$in\",\"status\":\"$status\",\"wall_s\":$wall,\"stderr\":\"$(head -c 300 "bin/$p.$in.err" | tr '\n"\\' '   ')\"}"
    fi
}
export -f run_one

echo "== runs: ${#phase1[@]} first, then ${#phase2[@]} while time is left"
: >"$out/results.jsonl"
printf '%s\n' "${phase1[@]}" "${phase2[@]}" |
    xargs -P 6 -L1 bash -c 'run_one "$0" "$1"' >>"$out/results.jsonl"

echo "== compute-sanitizer: memcheck on first inputs, racecheck on the shared-memory kernels" |
    tee "$out/sanitizer.log"
if command -v compute-sanitizer >/dev/null; then
    {
        for p in $programs; do
            [ -x "bin/$p" ] && echo "memcheck $p --input $("bin/$p" --list-inputs | head -1 | cut -f1)"
        done
        for a in "mm --size 128" "transpose --size 256" "scan --size 100000" \
            "radixsort --size 100000" "reduction --size 100000"; do
            [ -x "bin/${a%% *}" ] && echo "racecheck $a"
        done
    } | xargs -P 8 -L1 bash -c '
        if [ "$(date +%s)" -ge "$((deadline + 20))" ]; then echo "$0 $*: not run (time)"; exit; fi
        tool=$0 p=$1; shift
        r=$(timeout 30 compute-sanitizer --tool $tool --error-exitcode 9 "bin/$p" "$@" --check --repeat 1 --warmup 0 2>&1)
        echo "$tool $p $*: rc=$? $(echo "$r" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard" | head -3 | tr "\n" " ")"' |
        tee -a "$out/sanitizer.log"
else
    echo "compute-sanitizer not found" | tee -a "$out/sanitizer.log"
fi

python3 - "$out/results.jsonl" >"$out/summary.txt" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows.sort(key=lambda r: (r.get("kernel", ""), r.get("input", "")))
def num(v, fmt):
    return format(v, fmt) if isinstance(v, (int, float)) else "-"
head = "%-15s%-14s%-18s%11s%11s%9s%8s"
print(head % ("kernel", "input", "status", "median_ms", "checked", "err/tol", "wall_s"))
for r in rows:
    print(head % (r.get("kernel", ""), r.get("input", ""), r.get("status", ""),
                  num(r.get("median_ms"), ".3f"), num(r.get("checked"), "d"),
                  num(r.get("worst_err_over_tol"), ".3f"), num(r.get("wall_s"), ".1f")))
ok = sum(r.get("status") == "pass" for r in rows)
print("\n%d of %d runs passed their check" % (ok, len(rows)))
PY
tail -n +2 "$out/sanitizer.log" | sed 's/^/sanitizer: /' >>"$out/summary.txt"
echo "total $(($(date +%s) - start)) s" >>"$out/summary.txt"
cat "$out/summary.txt"
