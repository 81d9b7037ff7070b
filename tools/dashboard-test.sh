#!/usr/bin/env bash
# The dashboard's test (ctest dashboard): deploy/monitoring/dashboard.yaml's
# Grafana JSON has the shape Grafana loads, reads only metrics migserve
# exports (a migserve_ name quoted in its product code), and every query
# parses as PromQL by promtool (Debian's prometheus package), each one
# written as a recording rule. Usage: dashboard-test.sh OUT.
set -euo pipefail
out=$1
cd "$(dirname "$0")/.."
rm -rf "$out" && mkdir -p "$out"
grep -rhoE '"migserve_[a-z0-9_]+"' src --include='*.cc' --exclude='*_test.cc' |
  tr -d '"' | sort -u >"$out/metrics.txt"
node tools/k8s-validate/dashboard.mjs deploy/monitoring/dashboard.yaml \
  "$out/metrics.txt" >"$out/rules.json"
promtool check rules "$out/rules.json"
