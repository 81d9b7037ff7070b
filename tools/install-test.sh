#!/usr/bin/env bash
# The install's test (ctest install_renders): renders every overlay with
# and without the monitors through tools/install.sh --render (kubectl
# kustomize, a real renderer) and checks what a cluster would get: every
# object valid against its schema (tools/k8s-validate: Kubernetes and the
# Prometheus Operator's), every migserve container's image named by the
# digest, the agent only where the overlay says, the device plugin's Role
# in its namespace. Usage: install-test.sh OUT.
set -euo pipefail
out=$1
cd "$(dirname "$0")/.."
rm -rf "$out" && mkdir -p "$out"
digest=sha256:$(printf '%064d' 7)
fail() { echo "install-test: $*" >&2; exit 1; }
for overlay in $(ls deploy/overlays); do
  for monitoring in "" --monitoring; do
    file=$out/$overlay${monitoring:+-monitoring}.yaml
    tools/install.sh --render --overlay "$overlay" $monitoring \
      --registry registry.example.com/platform --digest "$digest" >"$file"
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
echo "install-test: $(ls deploy/overlays | wc -l) overlays render and validate" >&2
