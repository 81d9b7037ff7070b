#!/usr/bin/env bash
# The image's test (ctest image): cross-compiles migserve for linux/arm64
# (tools/build-arm64.sh, in ARM64DIR, kept between runs), builds the
# two-platform image twice from MIGSERVE and it (tools/make-image.sh) and
# checks that both have one digest, that the index holds linux/amd64 and
# linux/arm64 (each config saying its architecture) and the SBOM both
# platforms' packages; unpacks each platform with umoci and, in its root
# file system, runs its migserve (arm64 under qemu-user-static: --version,
# and the same greedy deployment as amd64's; amd64 as the image's own
# user), and amd64's `router --render` of a one-replica deployment with the
# image's nginx on that configuration, which must answer the proxy's own
# health check. Usage: image-test.sh MIGSERVE SRC OUT ARM64DIR. Exits 77
# (skipped) unless run as root with mmdebstrap, umoci,
# g++-aarch64-linux-gnu and qemu-user-static (`make test` installs them;
# CI runs as root) and ARM64DIR holds the arm64 build (`make image` makes
# it; CI's image step runs before `make test`).
set -euo pipefail
bin=$1 src=$2 out=$3 arm64dir=$4
if [ "$(id -u)" -ne 0 ] || ! command -v mmdebstrap >/dev/null ||
   ! command -v umoci >/dev/null || ! command -v aarch64-linux-gnu-g++ >/dev/null ||
   ! command -v qemu-aarch64-static >/dev/null; then
  echo "image-test: needs root, mmdebstrap, umoci, g++-aarch64-linux-gnu and qemu-user-static" >&2
  exit 77
fi
# The arm64 binary is `make image`'s (CI's image step), not every
# build's: without it the image is not tested here, and the test says so.
arm64=$arm64dir/build/migserve
if [ ! -x "$arm64" ]; then
  echo "image-test: no arm64 build in $arm64dir (make image, or" \
    "tools/build-arm64.sh $arm64dir, builds it); skipped" >&2
  exit 77
fi
rm -rf "$out" && mkdir -p "$out"
arm64=$("$src/tools/build-arm64.sh" "$arm64dir")
"$src/tools/make-image.sh" "$bin" "$out/a" "$arm64"
"$src/tools/make-image.sh" "$bin" "$out/b" "$arm64"
if [ "$(cat "$out/a/digest")" != "$(cat "$out/b/digest")" ]; then
  echo "image-test: two builds, two digests: $(cat "$out/a/digest") $(cat "$out/b/digest")" >&2
  exit 1
fi
grep -q '^nginx-light ' "$out/a/packages.txt"

version=$("$bin" --version | awk '{print $NF}')
mkdir "$out/layout"
tar -xf "$out/a/migserve.oci.tar" -C "$out/layout"
# The tag is an index of both platforms, the digest the index's; the SBOM
# names both platforms' packages and migserve.
python3 - "$out/layout" "$version" "$(cat "$out/a/digest")" "$out/a/sbom.spdx.json" <<'EOF'
import json, os, sys
layout, version, digest, sbom = sys.argv[1:]
def blob(d):
    return json.load(open(os.path.join(layout, "blobs", "sha256", d.split(":")[1])))
top = json.load(open(os.path.join(layout, "index.json")))
tagged = {m["annotations"]["org.opencontainers.image.ref.name"]: m for m in top["manifests"]}
index = tagged[version]
assert index["mediaType"] == "application/vnd.oci.image.index.v1+json", index
assert index["digest"] == digest, (index["digest"], digest)
manifests = blob(digest)["manifests"]
platforms = sorted((m["platform"]["os"], m["platform"]["architecture"]) for m in manifests)
assert platforms == [("linux", "amd64"), ("linux", "arm64")], platforms
for m in manifests:
    config = blob(blob(m["digest"])["config"]["digest"])
    assert config["architecture"] == m["platform"]["architecture"], config["architecture"]
doc = json.load(open(sbom))
assert doc["spdxVersion"] == "SPDX-2.3"
purls = [r["referenceLocator"] for p in doc["packages"] for r in p["externalRefs"]]
for arch in ("amd64", "arm64"):
    assert any(u.startswith("pkg:deb/debian/nginx-light@") and f"arch={arch}" in u
               for u in purls), arch
    assert f"pkg:generic/migserve@{version}?arch={arch}" in purls, arch
EOF
umoci unpack --image "$out/layout:$version-arm64" "$out/bundle-arm64" >/dev/null
arm64_root=$out/bundle-arm64/rootfs
# The arm64 migserve with the arm64 image's libraries, under emulation.
arm() { qemu-aarch64-static -L "$arm64_root" "$arm64_root/usr/local/bin/migserve" "$@"; }
got=$(arm --version)
[ "$got" = "migserve $version" ] || { echo "image-test: arm64 --version said '$got'" >&2; exit 1; }
# The same optimum (GPUs, bound), and each build's deployment valid to the
# other: the arm64 libm may round a last bit differently, which can move a
# near tie (on parva-slo6 the arm64 greedy fills one more idle slot).
workload=(-w "$src/data/workloads/parva-slo6.yaml" -p "$src/data/profiles/a100-80gb.csv")
"$bin" optimize "${workload[@]}" --algo greedy -q -o "$out/amd64.json"
arm optimize "${workload[@]}" --algo greedy -q -o "$out/arm64.json"
python3 - "$out/amd64.json" "$out/arm64.json" <<'EOF'
import json, sys
a, b = (json.load(open(p))["summary"] for p in sys.argv[1:])
for key in ("gpus", "lower_bound", "status"):
    assert a.get(key) == b.get(key), (key, a.get(key), b.get(key))
EOF
arm validate -d "$out/amd64.json" "${workload[@]}" >/dev/null
"$bin" validate -d "$out/arm64.json" "${workload[@]}" >/dev/null

umoci unpack --image "$out/layout:$version-amd64" "$out/bundle" >/dev/null
root=$out/bundle/rootfs
# The image's configuration: its user and entrypoint.
config=$out/bundle/config.json
python3 - "$config" <<'EOF'
import json, sys
process = json.load(open(sys.argv[1]))["process"]
assert process["user"]["uid"] == 65532, process["user"]
assert process["args"][0] == "/usr/local/bin/migserve", process["args"]
EOF
run() { chroot --userspec=65532:65532 "$root" "$@"; }
got=$(run /usr/local/bin/migserve --version)
[ "$got" = "migserve $version" ] || { echo "image-test: --version said '$got'" >&2; exit 1; }

# The proxy from the image: its migserve writes the configuration, its nginx
# serves it. A port found free may be taken by a neighbouring test before
# nginx binds it: then nginx exits, and the next try takes another port.
mkdir -p "$root/tmp/proxy"
cat >"$root/tmp/proxy/d.json" <<'EOF'
{"gpu": "A100-SXM4-80GB",
 "services": [{"name": "s", "model": "m", "throughput": 10, "latency_ms": 100}],
 "gpus": [{"id": 0, "node": "n", "index": 0, "instances": [
   {"profile": "7g.80gb", "start": 0, "service": "s", "batch": 1, "procs": 1,
    "throughput": 10, "latency_ms": 5}]}],
 "summary": {"algorithm": "milp", "gpus": 1, "router": "proxy"}}
EOF
printf 'service,node,gpu,start,address,port\ns,n,0,0,127.0.0.1,9\n' >"$root/tmp/proxy/r.csv"
chown -R 65532:65532 "$root/tmp/proxy"
nginx=
trap '[ -z "$nginx" ] || kill $nginx 2>/dev/null || true' EXIT
for try in 1 2 3; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  run /usr/local/bin/migserve router --render -d /tmp/proxy/d.json \
    --replicas /tmp/proxy/r.csv --listen "127.0.0.1:$port" --grpc-listen "" \
    --run-dir /tmp/proxy -o /tmp/proxy/nginx.conf
  run /usr/sbin/nginx -e /tmp/proxy/error.log -p /tmp/proxy -c /tmp/proxy/nginx.conf -t
  # chroot execs nginx, so $! is nginx's master.
  chroot --userspec=65532:65532 "$root" /usr/sbin/nginx -e /tmp/proxy/error.log \
    -p /tmp/proxy -c /tmp/proxy/nginx.conf >"$out/nginx.out" 2>&1 &
  nginx=$!
  for _ in $(seq 100); do
    if python3 -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:$port/v2/health/live').status != 200)" 2>/dev/null; then
      echo "image-test: $(cat "$out/a/digest"): linux/amd64 and linux/arm64;" \
        "migserve $version (both) and its proxy (amd64) run from the image" >&2
      exit 0
    fi
    kill -0 "$nginx" 2>/dev/null || break  # it exited: try another port
    sleep 0.1
  done
  kill "$nginx" 2>/dev/null || true
  wait "$nginx" 2>/dev/null || true
  echo "image-test: try $try: the image's nginx did not answer /v2/health/live on $port" >&2
  cat "$out/nginx.out" "$root/tmp/proxy/error.log" >&2 || true
done
exit 1
