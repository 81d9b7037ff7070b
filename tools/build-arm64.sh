#!/usr/bin/env bash
# Cross-compiles migserve for linux/arm64 (the image's second platform):
# a sysroot of Debian's arm64 packages (tools/make-sysroot.sh, made once)
# and Debian's aarch64 toolchain (cmake/aarch64-linux-gnu.cmake), the
# migserve target only. Prints the binary's path.
# usage: tools/build-arm64.sh DIR   (DIR/sysroot, DIR/build/migserve)
# Needs root (the sysroot's extraction), mmdebstrap and
# g++-aarch64-linux-gnu (tools/install-deps.sh --image). `make image` runs
# it; the image test (ctest image) checks what it built.
set -euo pipefail
dir=$(realpath -m "$1")
src=$(cd "$(dirname "$0")/.." && pwd)
command -v aarch64-linux-gnu-g++ >/dev/null ||
  { echo "build-arm64: needs g++-aarch64-linux-gnu (tools/install-deps.sh --image)" >&2; exit 2; }
# The sysroot again when the host's packages changed (their versions are
# the ones it takes).
stamp=$(dpkg-query -W -f='${Package} ${Version}\n' libyaml-cpp-dev libfmt-dev \
  coinor-libcbc-dev libcurl4-openssl-dev libcpp-httplib-dev libsqlite3-dev libc6-dev | md5sum)
if [ ! -d "$dir/sysroot" ] || [ "$(cat "$dir/sysroot.stamp" 2>/dev/null)" != "$stamp" ]; then
  "$src/tools/make-sysroot.sh" "$dir/sysroot"
  echo "$stamp" >"$dir/sysroot.stamp"
fi
if [ ! -f "$dir/build/build.ninja" ]; then
  cmake -S "$src" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake" \
    -DMIGSERVE_SYSROOT="$dir/sysroot" >&2
fi
echo "build-arm64: building $dir/build/migserve" >&2
ninja -C "$dir/build" -j "$(nproc)" migserve >&2
echo "$dir/build/migserve"
