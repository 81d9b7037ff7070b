#!/usr/bin/env bash
# Fleet-scale figures (docs/benchmarks.md, "Fleet scale"): generated
# workloads of 200 services / 5,000 GPUs and 400 / 10,000 (normal and
# lognormal rates, seed 18), each optimized by greedy, milp and parvagpu
# three times: the median wall time of the command, its solve time, its
# peak memory, GPUs and the lower bound; then plan between two proven
# optima of the same 200 services at two rate levels (5,000 and 6,000
# GPUs), with the plan's all-orders check.
#
# usage: tools/scale-figures.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
migserve="${1:-build}/migserve"
profiles=data/profiles/a100-80gb.csv
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Runs "$@" (a migserve command) and prints "wall_s peak_mb".
timed() {
  /usr/bin/time -f '%e %M' -o "$dir/time" "$@" 2>/dev/null
  awk '{printf "%s %.0f\n", $1, $2 / 1024}' "$dir/time"
}

median() { sort -n | sed -n 2p; }

generate() {  # services gpus distribution -> workload path
  local w="$dir/w-$1-$2-$3.yaml"
  "$migserve" generate -p "$profiles" --services "$1" --target-gpus "$2" \
    --distribution "$3" --seed 18 -o "$w"
  echo "$w"
}

echo "| workload | algorithm | wall s (median of 3) | solve s | peak MB | GPUs | lower bound | status |"
echo "|---|---|---|---|---|---|---|---|"
for size in "200 5000" "400 10000"; do
  set -- $size
  for distribution in normal lognormal; do
    w=$(generate "$1" "$2" "$distribution")
    for algo in greedy milp parvagpu; do
      : > "$dir/runs"
      for run in 1 2 3; do
        t=$(timed "$migserve" optimize -w "$w" -p "$profiles" --algo "$algo" \
          --time-limit 20 -o "$dir/d.json")
        s=$(jq -r '.summary | "\(.seconds) \(.gpus) \(.lower_bound) \(.status)"' \
          "$dir/d.json")
        echo "$t $s" >> "$dir/runs"
      done
      wall=$(awk '{print $1}' "$dir/runs" | median)
      solve=$(awk '{printf "%.2f\n", $3}' "$dir/runs" | median)
      peak=$(awk '{print $2}' "$dir/runs" | median)
      read -r _ _ _ gpus bound status < <(tail -1 "$dir/runs")
      echo "| $1 / $2 $distribution | $algo | $wall | $solve | $peak | $gpus | $bound | $status |"
    done
  done
done

echo
echo "| plan | GPUs | actions | wall s | peak MB | check |"
echo "|---|---|---|---|---|---|"
low=$(generate 200 5000 normal)
high=$(generate 200 6000 normal)
"$migserve" optimize -w "$low" -p "$profiles" --algo milp -o "$dir/low.json" 2>/dev/null
"$migserve" optimize -w "$high" -p "$profiles" --algo milp -o "$dir/high.json" 2>/dev/null
for direction in "high low 0" "low high 1100"; do
  set -- $direction
  t=$(timed "$migserve" plan --from "$dir/$1.json" --to "$dir/$2.json" \
    --spare-gpus "$3" -o "$dir/plan.json")
  "$migserve" plan --from "$dir/$1.json" --to "$dir/$2.json" \
    --spare-gpus "$3" -o "$dir/plan.json" 2> "$dir/plan.err"
  from=$(jq .summary.gpus "$dir/$1.json")
  to=$(jq .summary.gpus "$dir/$2.json")
  actions=$(jq '.actions | length' "$dir/plan.json")
  check=$(grep -o 'safe in every order' "$dir/plan.err" || echo NOT SAFE)
  read -r wall peak <<< "$t"
  echo "| $1 -> $2 | $from -> $to | $actions | $wall | $peak | $check |"
done
