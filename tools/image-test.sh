#!/usr/bin/env bash
# The image's test (ctest image): builds the image twice from MIGSERVE
# (tools/make-image.sh) and checks that both have one digest; unpacks it
# with umoci and, in its root file system as its own user, runs the image's
# migserve (--version, and `router --render` of a one-replica deployment)
# and the image's nginx on that configuration, which must answer the
# proxy's own health check. Usage: image-test.sh MIGSERVE SRC OUT. Exits 77
# (skipped) unless run as root with mmdebstrap and umoci (`make test`
# installs them; CI runs as root).
set -euo pipefail
bin=$1 src=$2 out=$3
if [ "$(id -u)" -ne 0 ] || ! command -v mmdebstrap >/dev/null ||
   ! command -v umoci >/dev/null; then
  echo "image-test: needs root, mmdebstrap and umoci" >&2
  exit 77
fi
rm -rf "$out" && mkdir -p "$out"
"$src/tools/make-image.sh" "$bin" "$out/a"
"$src/tools/make-image.sh" "$bin" "$out/b"
if [ "$(cat "$out/a/digest")" != "$(cat "$out/b/digest")" ]; then
  echo "image-test: two builds, two digests: $(cat "$out/a/digest") $(cat "$out/b/digest")" >&2
  exit 1
fi
grep -q '^nginx-light ' "$out/a/packages.txt"

version=$("$bin" --version | awk '{print $NF}')
mkdir "$out/layout"
tar -xf "$out/a/migserve.oci.tar" -C "$out/layout"
umoci unpack --image "$out/layout:$version" "$out/bundle" >/dev/null
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
      echo "image-test: $(cat "$out/a/digest"): migserve $version and its proxy run from the image" >&2
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
