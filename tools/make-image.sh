#!/usr/bin/env bash
# Builds migserve's container image from Debian packages, offline from any
# registry: mmdebstrap extracts the Debian packages the binary loads (found
# from its shared libraries, from the host's own apt sources, so their
# versions are the ones it was built against) and nginx for the proxy;
# migserve goes in /usr/local/bin, the GPU tables' data in
# /usr/share/migserve; umoci makes it an OCI image that runs as the
# non-root user migserve (65532). Everything carries SOURCE_DATE_EPOCH (the
# commit's time unless set), files are sorted and owned by root, so the same
# commit and the same package versions give the same digest.
#
# usage: tools/make-image.sh BINARY OUTDIR
# writes OUTDIR/migserve.oci.tar (an OCI image layout, tag migserve:VERSION),
# OUTDIR/digest (the manifest's sha256) and OUTDIR/packages.txt (each
# Debian package and version in the image). Needs root (mmdebstrap's root
# mode, files owned by root) and mmdebstrap, umoci, binutils.
set -euo pipefail
binary=$1
out=$2
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "make-image: needs root" >&2; exit 2; }
for tool in mmdebstrap umoci objcopy; do
  command -v "$tool" >/dev/null ||
    { echo "make-image: needs $tool (tools/install-deps.sh --image)" >&2; exit 2; }
done
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
version=$("$binary" --version | awk '{print $NF}')
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)

# The libraries the binary loads, the packages that hold them, and nginx.
mapfile -t libs < <(ldd "$binary" | awk '/=> \//{print $3}')
# One dpkg -S for all of them (each call reads the whole package database:
# 9 of the 20 seconds a build took, one call per library), under both of a
# merged /usr's names.
mapfile -t paths < <(for lib in "${libs[@]}"; do readlink -f "$lib"; done | sort -u)
owners=$(dpkg -S "${paths[@]}" "${paths[@]#/usr}" 2>/dev/null || true)
# Its lines: "package[:arch][, package...]: path" (and diversions, skipped).
declare -A owner_of
while IFS= read -r line; do
  [[ $line == "diversion by"* || $line != *": "* ]] && continue
  owner_of[${line#*: }]=${line%%: *}
done <<<"$owners"
packages=(nginx-light libnginx-mod-http-js ca-certificates)
for path in "${paths[@]}"; do
  owner=${owner_of[$path]:-${owner_of[${path#/usr}]:-}}
  [ -n "$owner" ] || { echo "make-image: no Debian package holds $path" >&2; exit 1; }
  owner=${owner%%,*}
  packages+=("${owner%%:*}")
done
include=$(printf '%s\n' "${packages[@]}" | sort -u | paste -sd, -)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list
echo "make-image: extracting $include" >&2
mmdebstrap --quiet --variant=extract --mode=root --skip=cleanup/apt/cache \
  --aptopt='Acquire::Check-Valid-Until "false"' --include="$include" \
  bookworm "$root" "$sources" >&2

# What the image holds, from the packages themselves; then no apt state.
for deb in "$root"/var/cache/apt/archives/*.deb; do
  dpkg-deb --show --showformat='${Package} ${Version}\n' "$deb"
done | sort >"$work/packages.txt"
rm -rf "$root"/var/cache/apt "$root"/var/lib/apt/lists "$root"/var/log/* \
  "$root"/etc/machine-id "$root"/etc/hostname "$root"/etc/resolv.conf

# Extracting runs no maintainer script, so update-alternatives' links
# (liblapack.so.3, libblas.so.3) are missing: link each library the binary
# loads, where it is missing, to the file the host resolves it to.
for lib in "${libs[@]}"; do
  if [ ! -e "$root$lib" ]; then
    target=$(readlink -f "$lib")
    [ -e "$root$target" ] || { echo "make-image: $target not in the image" >&2; exit 1; }
    ln -sf "$target" "$root$lib"
  fi
done

install -d "$root/usr/local/bin" "$root/usr/share/migserve" "$root/tmp"
chmod 1777 "$root/tmp"
objcopy --strip-debug "$binary" "$root/usr/local/bin/migserve"
cp -r data/gpus "$root/usr/share/migserve/gpus"
cp LICENSE* "$root/usr/share/migserve/" 2>/dev/null || true
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nmigserve:x:65532:65532:migserve:/nonexistent:/usr/sbin/nologin\n' \
  >"$root/etc/passwd"
printf 'root:x:0:\nmigserve:x:65532:\n' >"$root/etc/group"
find "$root" -newermt "@$SOURCE_DATE_EPOCH" -print0 |
  xargs -0r touch --no-dereference --date="@$SOURCE_DATE_EPOCH"

# An OCI layout with the root file system as its one layer.
layout=$work/oci
umoci init --layout "$layout"
umoci new --image "$layout:$version"
umoci unpack --image "$layout:$version" "$work/bundle" >/dev/null
rm -rf "$work/bundle/rootfs"
mv "$root" "$work/bundle/rootfs"
umoci repack --image "$layout:$version" --history.created="$created" \
  --history.created_by="tools/make-image.sh" "$work/bundle"
umoci config --image "$layout:$version" --created="$created" \
  --history.created="$created" --history.created_by="tools/make-image.sh" \
  --config.user=65532:65532 --config.entrypoint=/usr/local/bin/migserve \
  --config.workingdir=/tmp --config.label=org.opencontainers.image.version="$version" \
  --config.label=org.opencontainers.image.title=migserve
umoci gc --layout "$layout"

mkdir -p "$out"
digest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' \
  "$layout/index.json")
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 \
  --numeric-owner -cf "$out/migserve.oci.tar.tmp" -C "$layout" .
mv "$out/migserve.oci.tar.tmp" "$out/migserve.oci.tar"
echo "$digest" >"$out/digest"
cp "$work/packages.txt" "$out/packages.txt"
echo "make-image: $out/migserve.oci.tar migserve:$version $digest" \
  "($(wc -l <"$out/packages.txt") Debian packages, $out/packages.txt)" >&2
