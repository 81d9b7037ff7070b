#!/usr/bin/env bash
# The figures of docs/benchmarks.md "Transition-aware targets": for each pair
# (current deployment, new workload) the plain milp target and the
# transition-aware one (`optimize --from`), each planned and simulated from
# the current deployment. Prints one Markdown table row per pair and target:
# GPUs, pod starts, repartitioned GPUs, plan actions, simulated makespan.
# Run from the repository root after a build; writes under ${OUT:-build/transition}.
set -euo pipefail
bin=${MIGSERVE:-build/migserve}
p=data/profiles/a100-80gb.csv
out=${OUT:-build/transition}
limit=${TIME_LIMIT:-60}
mkdir -p "$out"

# scale WORKLOAD FACTOR: the workload with every rate times FACTOR.
scale() {
  awk -v f="$2" '{
    if (match($0, /throughput: [0-9.]+/)) {
      n = substr($0, RSTART + 12, RLENGTH - 12) * f
      $0 = substr($0, 1, RSTART - 1) "throughput: " sprintf("%.0f", n) substr($0, RSTART + RLENGTH)
    }
    print
  }' "$1"
}

# row LABEL NAME FROM.json TO.yaml: the plain and the aware target, planned
# and simulated on a cluster with room for both.
row() {
  local label=$1 name=$2 from=$3 workload=$4
  $bin optimize -w "$workload" -p $p --algo milp --time-limit "$limit" -o "$out/$name-plain.json" 2>/dev/null
  $bin optimize -w "$workload" -p $p --algo milp --time-limit "$limit" --from "$from" -o "$out/$name-aware.json" 2>"$out/$name-aware.log"
  local gpus_from gpus_plain gpus_aware nodes
  gpus_from=$(jq '.gpus | length' "$from")
  gpus_plain=$(jq '.summary.gpus' "$out/$name-plain.json")
  gpus_aware=$(jq '.summary.gpus' "$out/$name-aware.json")
  nodes=$(( ( $(printf '%s\n' "$gpus_from" "$gpus_plain" "$gpus_aware" | sort -n | tail -1) + 7 ) / 8 + 1 ))
  for kind in plain aware; do
    $bin simulate --from "$from" --to "$out/$name-$kind.json" --nodes "$nodes" --report "$out/$name-$kind-sim.json" >/dev/null 2>&1
    jq -r --arg title "$label" --arg kind "$kind" --slurpfile t "$out/$name-$kind.json" \
      --slurpfile a "$out/$name-aware.json" '
      .actions as $n | $t[0].summary as $s | $a[0].summary as $aware |
      "| \($title) | \($kind) | \($s.gpus) (\($s.status)) | " +
      "\(if $kind == "aware" then $aware.pod_starts else $aware.plain_optimum.pod_starts end) | " +
      "\(($n.create // 0) + ($n["local migrate"] // 0) + ($n["remote migrate"] // 0)) | " +
      "\($n.delete // 0) | \($n.repartition // 0) | \(.makespan_s * 10 | round / 10) s |"' "$out/$name-$kind-sim.json"
  done
}

echo "| transition | target | GPUs | pod starts | plan starts | deletes | repartitions | makespan |"
echo "|---|---|---|---|---|---|---|---|"
row day2night day2night data/deployments/day.json data/workloads/night.yaml
row night2day night2day data/deployments/night.json data/workloads/day.yaml
for w in normal-1 normal-2 lognormal-1 lognormal-2; do
  scale data/workloads/$w.yaml 0.7 >"$out/$w-0.7.yaml"
  scale data/workloads/$w.yaml 1.3 >"$out/$w-1.3.yaml"
  for f in 0.7 1.3; do
    $bin optimize -w "$out/$w-$f.yaml" -p $p --algo milp --time-limit "$limit" -o "$out/$w-$f.json" 2>/dev/null
  done
  row "$w 0.7 to 1.3" "$w-up" "$out/$w-0.7.json" "$out/$w-1.3.yaml"
  row "$w 1.3 to 0.7" "$w-down" "$out/$w-1.3.json" "$out/$w-0.7.yaml"
done
