#!/usr/bin/env bash
# Installs every build and test dependency of memplace from Debian packages.
# Idempotent: prints nothing and changes nothing when everything is already there.
set -euo pipefail

packages=(
  cmake ninja-build make
  clang-19 libclang-19-dev libclang-cpp19 llvm-19-dev libclang-rt-19-dev   # compiler, LibTooling, libFuzzer
  clang-format-19 clang-tidy-19
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libboost-context-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
