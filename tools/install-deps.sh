#!/usr/bin/env bash
# Installs the Debian packages migserve needs to build and test, if missing.
# As root it runs apt-get; otherwise it prints the command to run. With
# --node (the test setup) it also makes sure Node.js and Chromium (for the
# report's browser test) are there and installs the schema validator's npm
# packages (tools/k8s-validate, pinned by its lock file). With --fuzz it
# adds clang and libFuzzer (tools/fuzz.sh).
set -euo pipefail
packages=(
  build-essential cmake pkg-config clang-format
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  coinor-libcbc-dev libsqlite3-dev libcurl4-openssl-dev libcpp-httplib-dev
  nginx-light prometheus python3-grpcio
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ "${1:-}" = --node ] && ! command -v node >/dev/null; then
  missing+=(nodejs npm)
fi
if [ "${1:-}" = --node ] && ! command -v chromium >/dev/null; then
  missing+=(chromium)
fi
# --fuzz (tools/fuzz.sh): clang and its libFuzzer runtime.
if [ "${1:-}" = --fuzz ]; then
  for p in clang libclang-rt-14-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing Debian packages: ${missing[*]}" >&2
    echo "install-deps: run as root: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
if [ "${1:-}" = --node ]; then
  dir=$(dirname "$0")/k8s-validate
  if [ ! -f "$dir/node_modules/.package-lock.json" ] ||
     [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    echo "install-deps: npm ci in $dir" >&2
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
  fi
fi
