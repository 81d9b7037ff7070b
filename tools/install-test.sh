#!/usr/bin/env bash
# The install's test (ctest install_renders): renders every partitioner,
# with and without the monitors, in the two default namespaces and in one
# namespace of the user's choice (platform-gpu), through tools/install.sh
# --render (kubectl kustomize, a real renderer, which must print no
# warning: Kustomize v5 syntax only) and checks what a cluster would get:
# every object valid against its schema (tools/k8s-validate: Kubernetes,
# the Prometheus Operator's and migserve's CRD), every migserve container's
# image named by the digest, the agent only where the overlay says, the
# device plugin's Role in its namespace, the replica pods' admission policy
# under every partitioner, and in the chosen namespace every
# object, role binding subject and admission policy's service account.
# Usage: install-test.sh OUT.
set -euo pipefail
out=$1
cd "$(dirname "$0")/.."
rm -rf "$out" && mkdir -p "$out"
digest=sha256:$(printf '%064d' 7)
fail() { echo "install-test: $*" >&2; exit 1; }
# Kustomize v5 reads components; Debian 12's kubectl (1.20) carries v2.
kustomize=$(kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: v\([0-9]*\).*/\1/p')
[ "${kustomize:-0}" -ge 5 ] || {
  echo "install-test: kubectl's Kustomize is v${kustomize:-?}, the install needs v5" \
    "(kubectl 1.27 or later); skipped" >&2
  exit 77
}
for overlay in $(ls deploy/overlays); do
  for namespace in "" platform-gpu; do
  for monitoring in "" --monitoring; do
    file=$out/$overlay${namespace:+-$namespace}${monitoring:+-monitoring}.yaml
    tools/install.sh --render --overlay "$overlay" $monitoring \
      ${namespace:+--namespace $namespace} \
      --registry registry.example.com/platform --digest "$digest" >"$file" 2>"$file.err"
    [ ! -s "$file.err" ] || fail "$file: kubectl kustomize said: $(cat "$file.err")"
    node tools/k8s-validate/validate.mjs "$file"
    images=$(grep -c 'image: ' "$file")
    pinned=$(grep -c "image: registry.example.com/platform/migserve@$digest\$" "$file")
    # The controller, the autoscaler and (but under DRA) the agent.
    want=$([ "$overlay" = dra ] && echo 2 || echo 3)
    [ "$images" = "$want" ] && [ "$pinned" = "$want" ] ||
      fail "$file: $pinned of $images images by digest, want $want of $want"
    monitors=$(grep -cE '^kind: (PodMonitor|ServiceMonitor)$' "$file" || true)
    [ "$monitors" = "$([ -n "$monitoring" ] && echo 5 || echo 0)" ] ||
      fail "$file: $monitors monitors"
    rules=$(grep -cE '^kind: PrometheusRule$' "$file" || true)
    [ "$rules" = "$([ -n "$monitoring" ] && echo 1 || echo 0)" ] ||
      fail "$file: $rules PrometheusRules"
    grep -qx 'kind: CustomResourceDefinition' "$file" || fail "$file: no ServingTarget CRD"
    [ "$(grep -cx '  name: migserve-replica-pods' "$file")" = 2 ] ||
      fail "$file: no admission policy (and binding) for the replica pods"
    # Least privilege without harm (issue 90): each policy bound; none
    # that fails closed evaluates another's request (it matches only its
    # own by matchConditions, or only migserve's namespaces by its
    # binding); the controller's node writes are held to its requests.
    python3 - "$file" "$overlay" <<'PY' || fail "$file: admission policies"
import sys, yaml
path, overlay = sys.argv[1], sys.argv[2]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
policies = {d["metadata"]["name"]: d for d in docs
            if d["kind"] == "ValidatingAdmissionPolicy"}
bindings = {d["spec"]["policyName"]: d for d in docs
            if d["kind"] == "ValidatingAdmissionPolicyBinding"}
bad = []
if set(policies) != set(bindings):
    bad.append(f"policies {sorted(policies)} but bindings {sorted(bindings)}")
for name, p in policies.items():
    scoped = p["spec"].get("matchConditions") or (
        bindings.get(name, {}).get("spec", {}).get("matchResources", {})
        .get("namespaceSelector"))
    if p["spec"].get("failurePolicy", "Fail") == "Fail" and not scoped:
        bad.append(f"{name}: fails closed on every request it matches")
want = {"migserve-controller-node-writes", "migserve-node-annotations",
        "migserve-replica-pods", "migserve-proxy-own-pod"}
if overlay != "dra":
    want |= {"migserve-agent-own-node", "migserve-agent-own-pods"}
if set(policies) != want:
    bad.append(f"policies {sorted(policies)}, want {sorted(want)}")
writes = policies.get("migserve-controller-node-writes", {"spec": {}})["spec"]
if "object.spec == oldObject.spec" not in yaml.safe_dump(writes.get("validations")):
    bad.append("the controller's node writes may change a node's spec")
for b in bad:
    print(f"install-test: {path}: {b}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
    if [ -n "$namespace" ]; then
      python3 - "$file" "$namespace" <<'PY' || fail "$file: not all in $namespace"
import re, sys, yaml
path, ns = sys.argv[1], sys.argv[2]
# Where the agent's two Roles must stay, whatever the install's namespace.
fixed = {"migserve-agent-events": "default",
         "migserve-agent-device-plugin": ("gpu-operator", "nvidia-device-plugin")}
bad = []
for d in yaml.safe_load_all(open(path)):
    if not d:
        continue
    meta = d["metadata"]
    where = meta.get("namespace")
    if d["kind"] == "Namespace" and meta["name"] != ns:
        bad.append(f"Namespace {meta['name']}")
    if where and where != ns and where not in str(fixed.get(meta["name"], "")):
        bad.append(f"{d['kind']} {meta['name']} in {where}")
    for s in d.get("subjects", []):
        if s.get("kind") == "ServiceAccount" and s.get("namespace") != ns:
            bad.append(f"{d['kind']} {meta['name']}: subject {s['name']} in {s.get('namespace')}")
    text = yaml.safe_dump(d)
    for named in re.findall(r"system:serviceaccount:([a-z0-9-]+):", text):
        if named not in (ns, "kube-system"):  # its controllers
            bad.append(f"{d['kind']} {meta['name']}: names {named}'s account")
    if "=migserve-replicas" in text or "migserve-replicas/" in text:
        bad.append(f"{d['kind']} {meta['name']}: names migserve-replicas")
for b in bad:
    print(f"install-test: {path}: {b}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
    fi
  done
  done
done
grep -q 'nvidia.com/gpu.deploy.mig-manager: "false"' "$out/gpu-operator.yaml" ||
  fail "gpu-operator: the agent runs where the MIG manager does"
! grep -q 'gpu.deploy.mig-manager' "$out/device-plugin.yaml" ||
  fail "device-plugin: the agent is limited to MIG-manager-free nodes"
grep -q -- '--device-plugin-namespace=nvidia-device-plugin' "$out/device-plugin.yaml" ||
  fail "device-plugin: the agent looks for the plugin in the Operator's namespace"
[ "$(grep -c 'namespace: nvidia-device-plugin' "$out/device-plugin.yaml")" = 2 ] ||
  fail "device-plugin: the agent's Role and RoleBinding are not in the plugin's namespace"
grep -q -- '--partitioner=dra' "$out/dra.yaml" ||
  fail "dra: the controller does not partition through DRA"
! grep -qE 'name: migserve-agent|kind: DaemonSet' "$out/dra.yaml" ||
  fail "dra: the node agent (or its permissions) would run beside the DRA driver"
grep -qx '  - resourceclaims' "$out/dra.yaml" ||
  fail "dra: the controller may not create ResourceClaims"
# A namespace of the cluster's or another component's is refused before
# anything renders (issue 90: kube-system was relabelled privileged, and
# the uninstall would have deleted it).
for taken in kube-system default kube-public monitoring gpu-operator; do
  if tools/install.sh --render --namespace "$taken" \
       --registry registry.example.com/platform --digest "$digest" \
       >"$out/taken.yaml" 2>"$out/taken.err"; then
    fail "--namespace $taken was accepted"
  fi
  grep -q "a namespace of the cluster or of another component" "$out/taken.err" ||
    fail "--namespace $taken: $(cat "$out/taken.err")"
done
# Every namespace the install makes says so, as the check above reads it.
for file in "$out/gpu-operator.yaml" "$out/gpu-operator-platform-gpu.yaml"; do
  python3 - "$file" <<'PY' || fail "$file: a namespace without managed-by: migserve"
import sys, yaml
spaces = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "Namespace"]
sys.exit(0 if spaces and all(
    d["metadata"]["labels"].get("app.kubernetes.io/managed-by") == "migserve"
    for d in spaces) else 1)
PY
done
# Every object the install makes carries the label its uninstall deletes
# by, and `--uninstall --render` lists the same objects.
for file in "$out"/*.yaml; do
  case "$file" in *taken.yaml) continue ;; esac
  python3 - "$file" <<'PY' || fail "$file: an object without app.kubernetes.io/part-of: migserve"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
bad = [f'{d["kind"]} {d["metadata"]["name"]}' for d in docs
       if (d["metadata"].get("labels") or {}).get("app.kubernetes.io/part-of") != "migserve"]
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
done
listed=$(tools/install.sh --uninstall --render --namespace platform-gpu --monitoring | wc -l)
rendered=$(grep -c '^kind: ' "$out/gpu-operator-platform-gpu-monitoring.yaml")
[ "$listed" = "$rendered" ] ||
  fail "--uninstall --render lists $listed objects, the install renders $rendered"
# Every flag is checked before anything runs (issue 90).
for args in "--registry" "--registry --overlay dra" "--registry Bad/Registry" \
            "--uninstall --registry r.example" "--overlay nope --uninstall" \
            "--registry r.example --digest sha256:$(printf '%064d' 7) --docs-url ftp://x"; do
  if tools/install.sh $args --render >/dev/null 2>"$out/flag.err"; then
    fail "install.sh $args was accepted"
  fi
  grep -q '^install: ' "$out/flag.err" || fail "install.sh $args: $(cat "$out/flag.err")"
done
# The alerts' runbooks under the user's copy of the docs.
tools/install.sh --render --monitoring --registry registry.example.com/platform \
  --digest "$digest" --docs-url https://docs.example.com/migserve/ >"$out/docs-url.yaml"
[ "$(grep -c 'runbook_url: https://docs.example.com/migserve/kubernetes.md#migserve' "$out/docs-url.yaml")" = \
  "$(grep -c 'alert: ' deploy/monitoring/alerts.yaml)" ] ||
  fail "--docs-url: not every alert's runbook_url is under it"
# The uninstall deletes exactly what an install labelled, on a cluster
# whose reads a recording kubectl answers (tools/testing/kubectl): a
# ClusterRole of the install's name that someone else made stays, named;
# a namespace migserve did not make stops it before anything is deleted.
shim=$out/shim && mkdir -p "$shim" && cp tools/testing/kubectl "$shim/"
export REAL_KUBECTL=$(command -v kubectl)
export KUBECTL_LIVE=$out/live.json KUBECTL_NAMESPACES=$out/namespaces
export KUBECTL_DELETED=$out/deleted.json
python3 - "$out/gpu-operator-platform-gpu-monitoring.yaml" "$KUBECTL_LIVE" <<'PY'
import json, sys, yaml
items = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
for d in items:
    if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "migserve-viewer":
        del d["metadata"]["labels"]["app.kubernetes.io/part-of"]
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(sys.argv[2], "w"))
PY
echo "platform-gpu migserve" >"$KUBECTL_NAMESPACES"
rm -f "$KUBECTL_DELETED"
PATH=$shim:$PATH tools/install.sh --uninstall --namespace platform-gpu --monitoring \
  >/dev/null 2>"$out/uninstall.err" || fail "uninstall: $(cat "$out/uninstall.err")"
grep -q "install: kept ClusterRole migserve-viewer: not labelled" "$out/uninstall.err" ||
  fail "uninstall: the foreign ClusterRole not named: $(cat "$out/uninstall.err")"
python3 - "$KUBECTL_DELETED" "$rendered" <<'PY' || fail "uninstall: deleted the wrong objects"
import json, sys
deleted = json.load(open(sys.argv[1]))["items"]
names = [f'{d["kind"]}/{d["metadata"]["name"]}' for d in deleted]
assert "ClusterRole/migserve-viewer" not in names, names
assert len(names) == int(sys.argv[2]) - 1, (len(names), sys.argv[2])
PY
echo "platform-gpu -" >"$KUBECTL_NAMESPACES"
rm -f "$KUBECTL_DELETED"
if PATH=$shim:$PATH tools/install.sh --uninstall --namespace platform-gpu \
     >/dev/null 2>"$out/uninstall.err"; then
  fail "uninstall: took a namespace migserve did not make"
fi
[ ! -e "$KUBECTL_DELETED" ] || fail "uninstall: deleted something in a namespace not migserve's"
grep -q "namespace platform-gpu: was not made by migserve" "$out/uninstall.err" ||
  fail "uninstall: $(cat "$out/uninstall.err")"
echo "install-test: $(ls deploy/overlays | wc -l) partitioners, in the default" \
  "namespaces and in one of the user's, render without warnings and validate" >&2
