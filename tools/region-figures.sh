#!/usr/bin/env bash
# Region-scale figures (docs/benchmarks.md, "Region scale"): lognormal
# workloads from `migserve generate --latency 50 100 200` (seed 18) of
# 24 / 250 GPUs up to 2,000 services / 50,000 GPUs, each optimized once per
# algorithm: wall time, peak memory, GPUs, the lower bound and the gap to
# it. Credits are computed afresh (MIGSERVE_CREDIT_CACHE=off) unless
# CACHED=1, which keeps them in a cache of the run's own and reports the
# second run.
#
# usage: tools/region-figures.sh [BUILD_DIR]
#   ALGOS="greedy milp parvagpu"   the algorithms (greedy needs ~12 GB and
#                                  4 minutes at 2,000 services)
#   SIZES="24/250 200/5000 400/10000 1000/25000 2000/50000"
set -euo pipefail
cd "$(dirname "$0")/.."
migserve="${1:-build}/migserve"
profiles=data/profiles/a100-80gb.csv
algos="${ALGOS:-greedy milp parvagpu}"
sizes="${SIZES:-24/250 200/5000 400/10000 1000/25000 2000/50000}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [ "${CACHED:-0}" = 1 ]; then
  export MIGSERVE_CREDIT_CACHE="$dir/credits.db"
else
  export MIGSERVE_CREDIT_CACHE=off
fi

echo "| services / GPUs | algorithm | wall s | peak MB | GPUs | lower bound | gap | status |"
echo "|---|---|---|---|---|---|---|---|"
for size in $sizes; do
  services=${size%/*}
  gpus=${size#*/}
  w="$dir/w-$services.yaml"
  "$migserve" generate -p "$profiles" --services "$services" \
    --target-gpus "$gpus" --distribution lognormal --latency 50 100 200 \
    --seed 18 -o "$w"
  for algo in $algos; do
    run() {
      /usr/bin/time -f '%e %M' -o "$dir/time" "$migserve" optimize -w "$w" \
        -p "$profiles" --algo "$algo" -o "$dir/d.json" 2>/dev/null
    }
    if [ "${CACHED:-0}" = 1 ]; then run; fi
    run
    read -r wall kb < "$dir/time"
    read -r got bound status < <(jq -r \
      '.summary | "\(.gpus) \(.lower_bound) \(.status)"' "$dir/d.json")
    gap=$(awk -v g="$got" -v b="$bound" \
      'BEGIN { printf "%d (%.3f%%)", g - b, 100 * (g - b) / b }')
    echo "| $services / $gpus | $algo | $wall | $((kb / 1024)) | $got | $bound | $gap | $status |"
  done
done
