#!/usr/bin/env bash
# Region-scale figures (docs/benchmarks.md, "Region scale"): lognormal
# workloads from `migserve generate --latency 50 100 200` (seed 18) of
# 24 / 250 GPUs up to 2,000 services / 50,000 GPUs, each optimized once per
# algorithm: wall time, peak memory, GPUs, the lower bound and the gap to
# it. Credits are computed afresh (MIGSERVE_CREDIT_CACHE=off) unless
# CACHED=1, which keeps them in a cache of the run's own and reports the
# second run.
#
# Then transitions: for each size of TRANSITIONS, milp's deployment of the
# workload to milp's deployment of the same services at 60% of their rates:
# `plan`, `simulate` (wall time and peak memory of the controller executing
# the plan on the simulated cluster) and `optimize --from` (wall time and
# pod starts, creates and migrates, next to the plain optimum's plan).
#
# usage: tools/region-figures.sh [BUILD_DIR]
#   ALGOS="greedy milp parvagpu"   the algorithms
#   SIZES="24/250 200/5000 400/10000 1000/25000 2000/50000"
#   TRANSITIONS="40/1000 200/5000 400/10000"   (empty: none)
set -euo pipefail
cd "$(dirname "$0")/.."
migserve="${1:-build}/migserve"
profiles=data/profiles/a100-80gb.csv
algos="${ALGOS:-greedy milp parvagpu}"
sizes="${SIZES-24/250 200/5000 400/10000 1000/25000 2000/50000}"
transitions="${TRANSITIONS-40/1000 200/5000 400/10000}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [ "${CACHED:-0}" = 1 ]; then
  export MIGSERVE_CREDIT_CACHE="$dir/credits.db"
else
  export MIGSERVE_CREDIT_CACHE=off
fi

if [ -n "$sizes" ]; then
  echo "| services / GPUs | algorithm | wall s | peak MB | GPUs | lower bound | gap | status |"
  echo "|---|---|---|---|---|---|---|---|"
fi
generate() {  # SERVICES GPUS OUT
  "$migserve" generate -p "$profiles" --services "$1" --target-gpus "$2" \
    --distribution lognormal --latency 50 100 200 --seed 18 -o "$3"
}

for size in $sizes; do
  services=${size%/*}
  gpus=${size#*/}
  w="$dir/w-$services.yaml"
  generate "$services" "$gpus" "$w"
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

[ -n "$transitions" ] || exit 0
# Credits are not what these figures measure: kept in the run's own cache.
export MIGSERVE_CREDIT_CACHE="$dir/transition-credits.db"
[ -z "$sizes" ] || echo
timed() {  # OUT_TIME COMMAND...
  local out=$1
  shift
  /usr/bin/time -f '%e %M' -o "$out" "$@" >/dev/null 2>&1
}
starts() {  # PLAN_JSON: creates and migrates
  jq '[.actions[] | select(.kind == "create" or .kind == "migrate")] | length' "$1"
}
echo "| services / GPUs | actions | plan s | simulate s | simulate MB | starts | --from s | --from starts |"
echo "|---|---|---|---|---|---|---|---|"
for size in $transitions; do
  services=${size%/*}
  gpus=${size#*/}
  w="$dir/t-$services.yaml"
  generate "$services" "$gpus" "$w"
  awk '{ if (match($0, /throughput: [0-9.]+/)) {
           n = substr($0, RSTART + 12, RLENGTH - 12)
           $0 = substr($0, 1, RSTART + 11) sprintf("%.10g", n * 0.6) \
                substr($0, RSTART + RLENGTH) }
         print }' "$w" > "$dir/t60.yaml"
  "$migserve" optimize -w "$w" -p "$profiles" --algo milp \
    -o "$dir/before.json" 2>/dev/null
  "$migserve" optimize -w "$dir/t60.yaml" -p "$profiles" --algo milp \
    -o "$dir/after.json" 2>/dev/null
  timed "$dir/plan.time" "$migserve" plan --from "$dir/before.json" \
    --to "$dir/after.json" -o "$dir/plan.json"
  timed "$dir/sim.time" "$migserve" simulate --from "$dir/before.json" \
    --to "$dir/after.json"
  timed "$dir/from.time" "$migserve" optimize -w "$dir/t60.yaml" \
    -p "$profiles" --algo milp --from "$dir/before.json" -o "$dir/from.json"
  "$migserve" plan --from "$dir/before.json" --to "$dir/from.json" \
    -o "$dir/from-plan.json"
  read -r plan_s _ < "$dir/plan.time"
  read -r sim_s sim_kb < "$dir/sim.time"
  read -r from_s _ < "$dir/from.time"
  echo "| $services / $gpus | $(jq '.actions | length' "$dir/plan.json") | $plan_s | $sim_s | $((sim_kb / 1024)) | $(starts "$dir/plan.json") | $from_s | $(starts "$dir/from-plan.json") |"
done
