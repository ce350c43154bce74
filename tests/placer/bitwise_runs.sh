# Sourced by the Placer's whole-program tests (alias_test.sh, shadow_test.sh): each run of the
# program must print exactly what MEMPLACE=off prints (its outputs' checksums), bitwise.
#   prog, out: the program and a fresh results folder (set them before sourcing)
#   ERR_FILTER: an extended regex of stderr lines not worth showing with a failure (optional)
# Runs the reference (MEMPLACE=off; exits 1 unless it passes) and defines `run NAME ENV...`,
# which runs the program with ENV, compares, prints "ok NAME" or "FAIL NAME", and sets status=1
# on a failure. The decision cache is "$out/cache".
rm -rf "$out"
mkdir -p "$out"
unset MEMPLACE MEMPLACE_DISPATCH MEMPLACE_SPEC
export MEMPLACE_CACHE="$out/cache" MEMPLACE_QUIET=0

ref="$(MEMPLACE=off "$prog" 2>"$out/off.err")"
rc=$?
echo "off:  $ref"
if [[ $rc -ne 0 || "$ref" != PASS* ]]; then
  echo "FAIL: the program as written (MEMPLACE=off) did not pass (exit $rc)"
  cat "$out/off.err"
  exit 1
fi

status=0
run() { # name env...
  local name="$1"
  shift
  local got
  got="$(env "$@" "$prog" 2>"$out/$name.err")"
  local rc=$?
  if [[ $rc -ne 0 || "$got" != "$ref" ]]; then
    echo "FAIL $name (exit $rc): $got"
    grep -vE "${ERR_FILTER:-a^}" "$out/$name.err" | head -5
    status=1
  else
    echo "ok   $name"
  fi
}
