#!/usr/bin/env bash
# Installs the Debian packages migserve needs, if missing: to build it (no
# option; what `make demo` needs), to test it (--test: also clang-format,
# nginx (with its JavaScript module), Prometheus and grpcio that the tests run, Node.js and Chromium,
# and the npm packages of the schema validator, tools/k8s-validate, and of
# the OpenAI client, tools/openai-client, pinned by their lock files), to build the image (--image: mmdebstrap and umoci,
# tools/make-image.sh; --test includes them) or to build it with clang and
# its sanitizers and libFuzzer (--clang: `make asan`, tools/fuzz.sh).
# As root it runs apt-get; otherwise it prints the command to run.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  coinor-libcbc-dev libsqlite3-dev libcurl4-openssl-dev libcpp-httplib-dev
)
# The image: its root file systems, its layout, and its arm64 platform
# (Debian's cross compiler; qemu-user-static runs the result in the test).
image=(mmdebstrap umoci g++-aarch64-linux-gnu qemu-user-static)
case "${1:-}" in
  --test) packages+=(clang-format nginx-light libnginx-mod-http-js prometheus python3-grpcio "${image[@]}") ;;
  --image) packages+=("${image[@]}") ;;
  --clang) packages+=(clang libclang-rt-14-dev) ;;
  "") ;;
  *) echo "usage: tools/install-deps.sh [--test|--image|--clang]" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ "${1:-}" = --test ] && ! command -v node >/dev/null; then
  missing+=(nodejs npm)
fi
# kubectl renders the install (tools/install-test.sh); Debian's is in
# kubernetes-client, unless another kubectl is there.
if [ "${1:-}" = --test ] && ! command -v kubectl >/dev/null; then
  missing+=(kubernetes-client)
fi
if [ "${1:-}" = --test ] && ! command -v chromium >/dev/null; then
  missing+=(chromium)
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
# The npm packages the tests run, each folder pinned by its lock file: the
# schema validator and the official OpenAI SDK (tools/openai-client, the
# client of the LLM proxy tests).
if [ "${1:-}" = --test ]; then
  for dir in "$(dirname "$0")"/k8s-validate "$(dirname "$0")"/openai-client; do
    if [ ! -f "$dir/node_modules/.package-lock.json" ] ||
       [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
      echo "install-deps: npm ci in $dir" >&2
      npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
    fi
  done
fi
