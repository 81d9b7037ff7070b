#!/usr/bin/env bash
# Extracts a sysroot of Debian's arm64 packages that migserve builds
# against (the -dev packages of tools/install-deps.sh, arm64), for the
# cross build of cmake/aarch64-linux-gnu.cmake: mmdebstrap unpacks them
# without running anything (no emulator needed), from the host's own apt
# sources, so the versions are the host's. Needs root and mmdebstrap.
# usage: tools/make-sysroot.sh DIR
set -euo pipefail
dir=$1
[ "$(id -u)" -eq 0 ] || { echo "make-sysroot: needs root" >&2; exit 2; }
command -v mmdebstrap >/dev/null ||
  { echo "make-sysroot: needs mmdebstrap (tools/install-deps.sh --image)" >&2; exit 2; }
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list
mkdir -p "$(dirname "$dir")"
rm -rf "$dir.tmp"
mmdebstrap --quiet --variant=extract --mode=root --architectures=arm64 \
  --aptopt='Acquire::Check-Valid-Until "false"' \
  --include=libc6-dev,libstdc++-12-dev,libyaml-cpp-dev,nlohmann-json3-dev,libcli11-dev,libfmt-dev,libgtest-dev,libgmock-dev,libbenchmark-dev,coinor-libcbc-dev,libsqlite3-dev,libcurl4-openssl-dev,libcpp-httplib-dev \
  bookworm "$dir.tmp" "$sources" >&2
# Extracting runs no maintainer script, so update-alternatives' links to
# the reference BLAS and LAPACK (which CBC links) are missing: make them.
lib=$dir.tmp/usr/lib/aarch64-linux-gnu
for alt in blas lapack; do
  for f in "$lib/$alt"/lib*.so*; do
    [ -e "$lib/$(basename "$f")" ] || ln -s "$alt/$(basename "$f")" "$lib/$(basename "$f")"
  done
done
rm -rf "$dir" && mv "$dir.tmp" "$dir"
echo "make-sysroot: $dir ($(du -sh "$dir" | cut -f1))" >&2
