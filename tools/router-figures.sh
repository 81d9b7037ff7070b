#!/usr/bin/env bash
# Router figures (docs/benchmarks.md, "GPUs per router"): for each workload,
# router (proxy, gateway-api, random) and arrival_cv (1, 2), `optimize --algo
# milp` with that router and cv in the workload, then `serve` at load 1.0
# under the matching routing (its default: the deployment's router) with
# gaps of the workload's cv; gateway-api is served with round robin and with
# least request inside a group. Also the GPUs under the paper's model.
# Prints a Markdown table: GPUs and services within their p99 SLO.
#
# usage: tools/router-figures.sh [BUILD_DIR] [WORKLOAD...]   (default: build,
#        day night normal-1 lognormal-1 parva-slo1 ... parva-slo6)
set -euo pipefail
cd "$(dirname "$0")/.."
migserve="${1:-build}/migserve"
shift || true
workloads=("$@")
if [ ${#workloads[@]} -eq 0 ]; then
  workloads=(day night normal-1 lognormal-1 parva-slo1 parva-slo2 parva-slo3
             parva-slo4 parva-slo5 parva-slo6)
fi
profiles=data/profiles/a100-80gb.csv
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# The workload with the given extra top-level fields before max_procs.
variant() {  # name extra-yaml -> path
  local out="$dir/$1-$RANDOM.yaml"
  awk -v extra="$2" '/^max_procs:/ { printf "%s", extra } { print }' \
    "data/workloads/$1.yaml" > "$out"
  echo "$out"
}

gpus() {  # deployment -> GPUs
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["gpus"])' "$1"
}

within() {  # serve args... -> "ok/total"
  { "$migserve" serve "$@" --format json 2>/dev/null || true; } |
    python3 -c 'import json,sys; s=json.load(sys.stdin)["services"]; print("%d/%d" % (sum(x["ok"] for x in s), len(s)))'
}

echo "| workload | cv | paper GPUs | proxy GPUs | proxy in SLO | gateway-api GPUs | in SLO (round robin / least request) | random GPUs | random in SLO |"
echo "|---|---|---|---|---|---|---|---|---|"
for w in "${workloads[@]}"; do
  for cv in 1 2; do
    paper=$(variant "$w" "capacity_model: paper
arrival_cv: $cv
")
    "$migserve" optimize -w "$paper" -p "$profiles" --algo milp \
      --time-limit 20 -o "$dir/paper.json" 2>/dev/null
    row="| $w | $cv | $(gpus "$dir/paper.json")"
    for router in proxy gateway-api random; do
      y=$(variant "$w" "router: $router
arrival_cv: $cv
")
      d="$dir/$w-$router-$cv.json"
      "$migserve" optimize -w "$y" -p "$profiles" --algo milp \
        --time-limit 20 -o "$d" 2>/dev/null
      served=$(within -d "$d" -w "$y" -p "$profiles")
      if [ "$router" = gateway-api ]; then
        served="$served / $(within -d "$d" -w "$y" -p "$profiles" --in-group least-request)"
      fi
      row="$row | $(gpus "$d") | $served"
    done
    echo "$row |"
  done
done
