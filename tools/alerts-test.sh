#!/usr/bin/env bash
# The alerts' test (ctest alerts): the PrometheusRule of
# deploy/monitoring/alerts.yaml as a Prometheus rules file, checked by
# promtool (Debian's prometheus package), and promtool's unit tests of
# tools/testdata/alerts-test.yaml: each alert fires on the series given
# there, with its labels, and not before its `for`; then each rendered
# install's alerts against its own monitors' series (below). Usage:
# alerts-test.sh OUT.
set -euo pipefail
out=$1
cd "$(dirname "$0")/.."
rm -rf "$out" && mkdir -p "$out"
# The rule groups are the object's spec, two spaces in.
awk 'found { sub(/^  /, ""); print } /^spec:$/ { found = 1 }' \
  deploy/monitoring/alerts.yaml >"$out/rules.yaml"
promtool check rules "$out/rules.yaml"
cp tools/testdata/alerts-test.yaml "$out/"
# Each alert's runbook_url is its section of docs/kubernetes.md (issue 90:
# the alerts had none).
python3 - "$out/rules.yaml" docs/kubernetes.md <<'PY'
import re, sys, yaml
rules = [r for g in yaml.safe_load(open(sys.argv[1]))["groups"] for r in g["rules"]]
headings = {h.strip().lower() for h in re.findall(r"^#### (.+)$", open(sys.argv[2]).read(), re.M)}
bad = []
for r in rules:
    want = "docs/kubernetes.md#" + r["alert"].lower()
    got = r.get("annotations", {}).get("runbook_url")
    if got != want or r["alert"].lower() not in headings:
        bad.append(f'{r["alert"]}: runbook_url {got!r}, want {want!r} and a "#### {r["alert"]}" section')
for b in bad:
    print(f"alerts-test: {b}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
cd "$out" && promtool test rules alerts-test.yaml

# The alerts as each install renders them, against the series its monitors
# produce there, labelled as the Prometheus Operator labels them (issue 90:
# in a namespace of the user's choice the autoscaler's PodMonitor's job is
# "<namespace>/migserve-autoscale", and an alert selecting "migserve/..."
# fired from the first minute): a PodMonitor's job is
# "<its namespace>/<its name>", a ServiceMonitor's the Service's name. With
# every monitored target up no component alert fires; with none up the
# controller's and the autoscaler's do. Skipped where kubectl cannot render
# the install (tools/install-test.sh says why).
cd - >/dev/null
cd "$(dirname "$0")/.."
kustomize=$(kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: v\([0-9]*\).*/\1/p' || true)
if [ "${kustomize:-0}" -lt 5 ]; then
  echo "alerts-test: no kubectl with Kustomize v5; the rendered installs are not checked" >&2
  exit 0
fi
for namespace in "" platform-gpu; do
  name=install${namespace:+-$namespace}
  tools/install.sh --render --monitoring ${namespace:+--namespace $namespace} \
    --registry registry.example.com/platform \
    --digest "sha256:$(printf '%064d' 7)" >"$out/$name.yaml"
  python3 - "$out/$name.yaml" "$out/$name" <<'PY'
import sys, yaml
render, base = sys.argv[1], sys.argv[2]
docs = [d for d in yaml.safe_load_all(open(render)) if d]
rules = [d for d in docs if d["kind"] == "PrometheusRule"]
assert len(rules) == 1, f"{render}: {len(rules)} PrometheusRules"
yaml.safe_dump({"groups": rules[0]["spec"]["groups"]}, open(base + "-rules.yaml", "w"))
jobs = []
for d in docs:
    meta = d["metadata"]
    if d["kind"] == "PodMonitor":
        jobs.append(f'{meta["namespace"]}/{meta["name"]}')
    elif d["kind"] == "ServiceMonitor":
        # The selected Service's name (no jobLabel): the controller's.
        jobs.append(d["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"])
assert len(jobs) == 5, f"{render}: monitors {jobs}"
down = ["MigserveControllerDown", "MigserveAutoscalerDown", "MigserveProxyDown"]
healthy = {
    "interval": "1m",
    "input_series": [{"series": f'up{{job="{j}", instance="10.0.0.{i}:9090"}}',
                      "values": "1x30"} for i, j in enumerate(jobs)],
    "alert_rule_test": [{"eval_time": "25m", "alertname": a, "exp_alerts": []}
                        for a in down],
}
alerts = {r["alert"]: r for g in rules[0]["spec"]["groups"]
          for r in g["rules"] if "alert" in r}
silent = {
    "interval": "1m",
    "input_series": [{"series": 'migserve_degraded', "values": "0x30"}],
    "alert_rule_test": [
        {"eval_time": "25m", "alertname": a,
         "exp_alerts": [{"exp_labels": alerts[a]["labels"],
                         "exp_annotations": alerts[a]["annotations"]}]}
        for a in ["MigserveControllerDown", "MigserveAutoscalerDown"]],
}
test = {"rule_files": [base.split("/")[-1] + "-rules.yaml"],
        "evaluation_interval": "1m", "tests": [healthy, silent]}
yaml.safe_dump(test, open(base + "-test.yaml", "w"))
PY
  (cd "$out" && promtool check rules "$name-rules.yaml" >/dev/null &&
    promtool test rules "$name-test.yaml") ||
    { echo "alerts-test: the alerts of $name fail against its own monitors' series" >&2; exit 1; }
done
