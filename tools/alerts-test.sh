#!/usr/bin/env bash
# The alerts' test (ctest alerts): the PrometheusRule of
# deploy/monitoring/alerts.yaml as a Prometheus rules file, checked by
# promtool (Debian's prometheus package), and promtool's unit tests of
# tools/testdata/alerts-test.yaml: each alert fires on the series given
# there, with its labels, and not before its `for`. Usage: alerts-test.sh OUT.
set -euo pipefail
out=$1
cd "$(dirname "$0")/.."
rm -rf "$out" && mkdir -p "$out"
# The rule groups are the object's spec, two spaces in.
awk 'found { sub(/^  /, ""); print } /^spec:$/ { found = 1 }' \
  deploy/monitoring/alerts.yaml >"$out/rules.yaml"
promtool check rules "$out/rules.yaml"
cp tools/testdata/alerts-test.yaml "$out/"
cd "$out" && promtool test rules alerts-test.yaml
