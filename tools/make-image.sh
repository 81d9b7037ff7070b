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
# usage: tools/make-image.sh BINARY OUTDIR [ARM64_BINARY]
# writes OUTDIR/migserve.oci.tar (an OCI image layout whose tag VERSION is
# an image index: linux/amd64 from BINARY and, given ARM64_BINARY (the
# cross build of cmake/aarch64-linux-gnu.cmake), linux/arm64 from the same
# Debian packages for arm64; each platform's manifest also tagged
# VERSION-ARCH), OUTDIR/digest (the index's sha256: what the install pins,
# each node pulling its platform), OUTDIR/packages.txt (each Debian
# package and version in the image) and OUTDIR/sbom.spdx.json (the same,
# per platform, as an SPDX 2.3 document with package URLs). Needs root
# (mmdebstrap's root mode, files owned by root) and mmdebstrap, umoci,
# binutils (and binutils-aarch64-linux-gnu for ARM64_BINARY).
set -euo pipefail
binary=$1
out=$2
arm64_binary=${3:-}
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
# The libraries the binary names itself (not those they load in turn):
# for another platform, apt resolves the rest for that platform (amd64's
# libgfortran5 loads libquadmath0, which arm64 has not).
mapfile -t direct < <(objdump -p "$binary" | awk '/NEEDED/{print $2}')
packages=(nginx-light libnginx-mod-http-js ca-certificates)
direct_packages=("${packages[@]}")
for lib in "${libs[@]}"; do
  path=$(readlink -f "$lib")
  owner=${owner_of[$path]:-${owner_of[${path#/usr}]:-}}
  [ -n "$owner" ] || { echo "make-image: no Debian package holds $path" >&2; exit 1; }
  owner=${owner%%,*}
  packages+=("${owner%%:*}")
  for name in "${direct[@]}"; do
    [ "$(basename "$lib")" = "$name" ] && direct_packages+=("${owner%%:*}")
  done
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list

# make_root ARCH BINARY: the root file system of one platform in
# $work/root-ARCH, its packages in $work/packages-ARCH.txt. The libraries
# are the host's paths with the platform's triplet.
make_root() {
  local arch=$1 bin=$2 triplet root=$work/root-$1 include
  triplet=$([ "$arch" = arm64 ] && echo aarch64-linux-gnu || echo x86_64-linux-gnu)
  if [ "$arch" = amd64 ]; then
    include=$(printf '%s\n' "${packages[@]}" | sort -u | paste -sd, -)
  else
    include=$(printf '%s\n' "${direct_packages[@]}" | sort -u | paste -sd, -)
  fi
  echo "make-image: extracting for linux/$arch $include" >&2
  mmdebstrap --quiet --variant=extract --mode=root --skip=cleanup/apt/cache \
    --architectures="$arch" \
    --aptopt='Acquire::Check-Valid-Until "false"' --include="$include" \
    bookworm "$root" "$sources" >&2

  # What the image holds, from the packages themselves; then no apt state.
  for deb in "$root"/var/cache/apt/archives/*.deb; do
    dpkg-deb --show --showformat='${Package} ${Version}\n' "$deb"
  done | sort >"$work/packages-$arch.txt"
  rm -rf "$root"/var/cache/apt "$root"/var/lib/apt/lists "$root"/var/log/* \
    "$root"/etc/machine-id "$root"/etc/hostname "$root"/etc/resolv.conf

  # Extracting runs no maintainer script, so update-alternatives' links
  # (liblapack.so.3, libblas.so.3) are missing: link each library the
  # binary loads, where it is missing, to the file the host resolves it to.
  # (For another platform, the libraries behind such a link only.)
  local lib target
  for lib in "${libs[@]}"; do
    if [ "$arch" != amd64 ] && [[ "$(readlink "$lib")" != /etc/alternatives/* ]]; then
      continue
    fi
    lib=${lib//x86_64-linux-gnu/$triplet}
    # Without a merged /usr (arm64's /lib holds the loader only), under it.
    [ -d "$root$(dirname "$lib")" ] || lib=/usr$lib
    if [ ! -e "$root$lib" ]; then
      target=$(readlink -f "${lib//$triplet/x86_64-linux-gnu}")
      target=${target//x86_64-linux-gnu/$triplet}
      [ -e "$root$target" ] || { echo "make-image: $target not in the image" >&2; exit 1; }
      # Relative, so that it resolves inside the root wherever it is.
      ln -sfr "$root$target" "$root$lib"
    fi
  done

  install -d "$root/usr/local/bin" "$root/usr/share/migserve" "$root/tmp"
  chmod 1777 "$root/tmp"
  local objcopy=objcopy
  [ "$arch" = arm64 ] && objcopy=aarch64-linux-gnu-objcopy
  "$objcopy" --strip-debug "$bin" "$root/usr/local/bin/migserve"
  cp -r data/gpus "$root/usr/share/migserve/gpus"
  cp LICENSE* "$root/usr/share/migserve/" 2>/dev/null || true
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nmigserve:x:65532:65532:migserve:/nonexistent:/usr/sbin/nologin\n' \
    >"$root/etc/passwd"
  printf 'root:x:0:\nmigserve:x:65532:\n' >"$root/etc/group"
  find "$root" -newermt "@$SOURCE_DATE_EPOCH" -print0 |
    xargs -0r touch --no-dereference --date="@$SOURCE_DATE_EPOCH"
}

platforms=(amd64)
[ -z "$arm64_binary" ] || platforms+=(arm64)
make_root amd64 "$binary"
# (Not on the right of ||, where set -e would not stop it.)
if [ -n "$arm64_binary" ]; then make_root arm64 "$arm64_binary"; fi
# An OCI layout: per platform a manifest with its root file system as its
# one layer (tag VERSION-ARCH), and an index of them (tag VERSION).
layout=$work/oci
umoci init --layout "$layout"
# add_platform ARCH: the platform's manifest, from $work/root-ARCH.
add_platform() {
  local arch=$1 tag=$version-$1
  umoci new --image "$layout:$tag"
  umoci unpack --image "$layout:$tag" "$work/bundle-$arch" >/dev/null
  rm -rf "$work/bundle-$arch/rootfs"
  mv "$work/root-$arch" "$work/bundle-$arch/rootfs"
  umoci repack --image "$layout:$tag" --history.created="$created" \
    --history.created_by="tools/make-image.sh" "$work/bundle-$arch"
  umoci config --image "$layout:$tag" --created="$created" \
    --history.created="$created" --history.created_by="tools/make-image.sh" \
    --os=linux --architecture="$arch" \
    --config.user=65532:65532 --config.entrypoint=/usr/local/bin/migserve \
    --config.workingdir=/tmp --config.label=org.opencontainers.image.version="$version" \
    --config.label=org.opencontainers.image.title=migserve
}
for arch in "${platforms[@]}"; do add_platform "$arch"; done
umoci gc --layout "$layout"
# The index of the platforms' manifests, tagged VERSION, beside them.
python3 - "$layout" "$version" "${platforms[@]}" <<'PY'
import hashlib, json, os, sys
layout, version, platforms = sys.argv[1], sys.argv[2], sys.argv[3:]
path = os.path.join(layout, "index.json")
top = json.load(open(path))
by_tag = {m["annotations"]["org.opencontainers.image.ref.name"]: m
          for m in top["manifests"]}
manifests = []
for arch in platforms:
    m = dict(by_tag[f"{version}-{arch}"])
    m.pop("annotations", None)
    m["platform"] = {"architecture": arch, "os": "linux"}
    manifests.append(m)
blob = json.dumps({"schemaVersion": 2,
                   "mediaType": "application/vnd.oci.image.index.v1+json",
                   "manifests": manifests}, sort_keys=True).encode()
digest = hashlib.sha256(blob).hexdigest()
with open(os.path.join(layout, "blobs", "sha256", digest), "wb") as f:
    f.write(blob)
top["manifests"] = [{
    "mediaType": "application/vnd.oci.image.index.v1+json",
    "digest": f"sha256:{digest}", "size": len(blob),
    "annotations": {"org.opencontainers.image.ref.name": version}}] + [
    by_tag[f"{version}-{arch}"] for arch in platforms]
json.dump(top, open(path, "w"), sort_keys=True)
PY
mkdir -p "$out"
digest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' \
  "$layout/index.json")
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 \
  --numeric-owner -cf "$out/migserve.oci.tar.tmp" -C "$layout" .
mv "$out/migserve.oci.tar.tmp" "$out/migserve.oci.tar"
echo "$digest" >"$out/digest"
cp "$work/packages-amd64.txt" "$out/packages.txt"
# The SBOM: every platform's Debian packages (and migserve itself), SPDX
# 2.3 JSON with package URLs; its times and ids from the commit.
python3 - "$work" "$version" "$created" "${platforms[@]}" >"$out/sbom.spdx.json" <<'PY'
import hashlib, json, sys
work, version, created, platforms = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
packages, relations = [], []
def add(ident, name, ver, purl, supplier):
    packages.append({
        "SPDXID": ident, "name": name, "versionInfo": ver,
        "supplier": supplier, "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False, "licenseConcluded": "NOASSERTION",
        "licenseDeclared": "NOASSERTION", "copyrightText": "NOASSERTION",
        "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER",
                          "referenceType": "purl", "referenceLocator": purl}]})
    relations.append({"spdxElementId": "SPDXRef-DOCUMENT",
                      "relationshipType": "DESCRIBES",
                      "relatedSpdxElement": ident})
for arch in platforms:
    add(f"SPDXRef-migserve-{arch}", "migserve", version,
        f"pkg:generic/migserve@{version}?arch={arch}", "NOASSERTION")
    for line in open(f"{work}/packages-{arch}.txt"):
        name, ver = line.split()
        add(f"SPDXRef-deb-{arch}-{name.replace('+', 'plus').replace('.', '-')}",
            name, ver,
            f"pkg:deb/debian/{name}@{ver.replace(':', '%3A')}?arch={arch}&distro=debian-12",
            "Organization: Debian")
body = {"spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT", "name": f"migserve-{version}-image",
        "creationInfo": {"created": created,
                         "creators": ["Tool: migserve tools/make-image.sh"]},
        "packages": packages, "relationships": relations}
ns = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
body["documentNamespace"] = f"https://migserve.io/spdx/migserve-{version}-{ns}"
json.dump(body, sys.stdout, indent=1, sort_keys=True)
print()
PY
echo "make-image: $out/migserve.oci.tar migserve:$version $digest" \
  "(linux/${platforms[*]}; $(wc -l <"$out/packages.txt") Debian packages," \
  "$out/packages.txt, $out/sbom.spdx.json)" >&2
