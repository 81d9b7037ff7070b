#!/usr/bin/env bash
# Installs migserve on the cluster of the current kubeconfig context in one
# command (docs/kubernetes.md, "Install"): pushes the image `make image`
# built to REGISTRY (skopeo), renders the install with the image named by
# its digest (kubectl kustomize), and applies it (kubectl apply).
#
# usage: tools/install.sh --registry REGISTRY [--overlay NAME] [--namespace NS]
#                         [--monitoring] [--image-dir DIR] [--digest SHA]
#                         [--render]
#        tools/install.sh --uninstall [--overlay NAME] [--namespace NS]
#                         [--monitoring] [--render]
#   --registry R   where the image goes: R/migserve (e.g. ghcr.io/acme)
#   --overlay N    the partitioner: device-plugin, gpu-operator or dra
#                  (default: gpu-operator)
#   --namespace NS all of migserve in NS (deploy/install); default: the
#                  namespaces migserve and migserve-replicas (deploy/overlays)
#   --monitoring   also the Prometheus Operator's monitors (deploy/monitoring)
#   --image-dir D  the image `make image` wrote (default: build/image)
#   --digest SHA   the image's digest, where D does not hold it (--render)
#   --docs-url U   where your copy of docs/ is served: each alert's
#                  runbook_url becomes U/kubernetes.md#... (default: the
#                  repository's relative docs/kubernetes.md#...)
#   --render       print the manifests instead of pushing and applying
#                  (--uninstall: the objects it would delete)
#   --uninstall    delete what the install with these flags made: only the
#                  objects that carry app.kubernetes.io/part-of=migserve,
#                  its namespaces (and all in them) and the ServingTarget
#                  CRD (and every ServingTarget) included; drain first to
#                  keep serving out of it (docs/kubernetes.md, "Uninstall")
set -euo pipefail
cd "$(dirname "$0")/.."
registry="" overlay=gpu-operator namespace="" monitoring=0 dir=build/image digest="" render=0
uninstall=0 docs_url=""
die() { echo "install: $*" >&2; exit 2; }
# Whether namespace $1 is free to take: it does not exist, or a migserve
# install made it (its label app.kubernetes.io/managed-by=migserve).
ours_or_none() {
  local owner exists
  owner=$(kubectl get namespace "$1" --ignore-not-found \
    -o 'jsonpath={.metadata.labels.app\.kubernetes\.io/managed-by}')
  exists=$(kubectl get namespace "$1" --ignore-not-found -o name)
  [ -z "$exists" ] || [ "$owner" = migserve ]
}
# A flag's value, or a usage error naming the flag.
value() { [ $# -ge 2 ] && [ -n "$2" ] && [ "${2#--}" = "$2" ] || die "$1: needs a value (--help)"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --registry) value "$@"; registry=$2; shift 2 ;;
    --overlay) value "$@"; overlay=$2; shift 2 ;;
    --namespace) value "$@"; namespace=$2; shift 2 ;;
    --monitoring) monitoring=1; shift ;;
    --image-dir) value "$@"; dir=$2; shift 2 ;;
    --digest) value "$@"; digest=$2; shift 2 ;;
    --docs-url) value "$@"; docs_url=${2%/}; shift 2 ;;
    --render) render=1; shift ;;
    --uninstall) uninstall=1; shift ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
if [ "$uninstall" = 1 ]; then
  [ -z "$registry$digest" ] ||
    die "--uninstall: takes no --registry or --digest (it deletes by name and label)"
else
  [ -n "$registry" ] || die "--registry: name where the image goes (R/migserve)"
  # A registry as an image name takes it: a host (with a port) and a path,
  # lower-case.
  [[ "$registry" =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]([-a-z0-9._]*[a-z0-9])?)*$ ]] ||
    die "--registry $registry: not a registry as an image name takes it (host[:port][/path], lower-case)"
fi
[ -z "$docs_url" ] || [[ "$docs_url" =~ ^https?://[^[:space:]\"]+$ ]] ||
  die "--docs-url $docs_url: not an http(s) URL"
[ -d "deploy/overlays/$overlay" ] ||
  die "--overlay $overlay: no such overlay (have: $(ls deploy/overlays | paste -sd' ' -))"
# A DNS label, as a namespace's name must be.
[ -z "$namespace" ] || [[ "$namespace" =~ ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$ ]] ||
  die "--namespace $namespace: not a namespace name (lower-case letters, digits and '-')"
# The install labels its namespace Pod Security "privileged" and the
# documented uninstall deletes it: never a namespace of the cluster's own
# or of a component beside migserve.
case "$namespace" in
  default|kube-*|openshift-*|gpu-operator|nvidia-*|monitoring|prometheus|\
  cert-manager|gateway-system|istio-system|kserve|knative-*)
    die "--namespace $namespace: a namespace of the cluster or of another component; the install would relabel it privileged and an uninstall delete it: name one for migserve alone" ;;
esac
if [ "$uninstall" = 0 ]; then
  if [ -z "$digest" ]; then
    [ -f "$dir/digest" ] || die "$dir/digest: no image; run make image first"
    digest=$(cat "$dir/digest")
  fi
  [[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]] || die "--digest $digest: not sha256:<64 hex digits>"
fi
command -v kubectl >/dev/null || die "needs kubectl (Debian: kubernetes-client)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy of deploy/ with its entry chosen: an overlay (the two default
# namespaces), or deploy/install with its one setting, the namespace, and
# the partitioner's component.
cp -r deploy "$work/deploy"
if [ -n "$namespace" ]; then
  entry=deploy/install
  sed -i -e "s|^namespace: .*|namespace: $namespace|" \
    -e "s|^  - ../components/gpu-operator\$|  - ../components/$overlay|" \
    "$work/$entry/kustomization.yaml"
  where="namespace $namespace"
else
  entry=deploy/overlays/$overlay
  where="namespaces migserve and migserve-replicas"
fi
# The monitors go in as a component of the entry, so that its namespace
# reaches them too; the image by digest.
if [ "$monitoring" = 1 ]; then
  monitors=$(realpath --relative-to="$work/$entry" "$work/deploy/components/monitoring")
  sed -i "/^components:\$/a\\  - $monitors" "$work/$entry/kustomization.yaml"
fi
if [ "$uninstall" = 0 ]; then
  cat >>"$work/$entry/kustomization.yaml" <<EOF
images:
  - name: migserve
    newName: $registry/migserve
    digest: $digest
EOF
fi
kubectl kustomize "$work/$entry" >"$work/all.yaml"
if [ -n "$docs_url" ]; then
  sed -i "s|runbook_url: docs/|runbook_url: $docs_url/|" "$work/all.yaml"
fi
if [ "$uninstall" = 1 ]; then
  if [ "$render" = 1 ]; then
    # The install's objects, by kind, name and namespace.
    python3 - "$work/all.yaml" <<'PY'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d:
        m = d["metadata"]
        print(f'{d["kind"]} {m["name"]}' + (f' -n {m["namespace"]}' if m.get("namespace") else ""))
PY
    exit 0
  fi
  # A namespace of the install that exists and that no migserve install
  # made is not deleted (nor anything else).
  for ns in $(python3 - "$work/all.yaml" <<'PY'
import sys, yaml
print(" ".join(d["metadata"]["name"] for d in yaml.safe_load_all(open(sys.argv[1]))
               if d and d["kind"] == "Namespace"))
PY
  ); do
    ours_or_none "$ns" ||
      die "namespace $ns: was not made by migserve (no label app.kubernetes.io/managed-by=migserve); nothing deleted"
  done
  # What of it the cluster holds, and of that only what an install
  # labelled: an object of the same name made by someone else stays, named.
  kubectl get -f "$work/all.yaml" --ignore-not-found -o json >"$work/live.json"
  python3 - "$work/live.json" "$work/delete.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read().strip()
live = json.loads(text) if text else {}
items = live.get("items", [live] if live.get("kind") else [])
ours = []
for o in items:
    m = o.get("metadata", {})
    where = f' in {m["namespace"]}' if m.get("namespace") else ""
    if (m.get("labels") or {}).get("app.kubernetes.io/part-of") == "migserve":
        ours.append(o)
    else:
        print(f'install: kept {o["kind"]} {m.get("name")}{where}: not labelled '
              "app.kubernetes.io/part-of=migserve, so not an install's",
              file=sys.stderr)
json.dump({"apiVersion": "v1", "kind": "List", "items": ours},
          open(sys.argv[2], "w"))
print(f"install: {len(ours)} of the install's objects to delete",
      file=sys.stderr)
PY
  echo "install: uninstalling $entry ($overlay, $where) from $(kubectl config current-context)" >&2
  kubectl delete -f "$work/delete.json" --ignore-not-found --wait=false
  exit 0
fi
if [ "$render" = 1 ]; then
  cat "$work/all.yaml"
  exit 0
fi

# A namespace that exists and that no migserve install made is not taken.
if [ -n "$namespace" ]; then
  ours_or_none "$namespace" ||
    die "--namespace $namespace: exists and was not made by migserve (no label app.kubernetes.io/managed-by=migserve); the install would relabel it privileged and an uninstall delete it: name a new one"
fi
command -v skopeo >/dev/null || die "needs skopeo (Debian: skopeo) to push the image"
version=$(tar -xOf "$dir/migserve.oci.tar" ./index.json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"])')
echo "install: pushing $registry/migserve:$version ($digest)" >&2
skopeo copy --all --preserve-digests "oci-archive:$dir/migserve.oci.tar:$version" \
  "docker://$registry/migserve:$version" >&2
echo "install: applying $entry ($overlay, $where) to $(kubectl config current-context)" >&2
kubectl apply -f "$work/all.yaml"
