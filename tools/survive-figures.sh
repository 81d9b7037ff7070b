#!/usr/bin/env bash
# Redundancy figures (docs/benchmarks.md, "Redundancy"): a `simulate` sweep
# that loses every GPU of the cluster at three moments of night2day and
# day2night (20%, 50% and 80% of the makespan without a loss), once between
# the plain milp deployments and once between deployments optimized with
# `survive: {domain: gpu, keep: 1}`. Prints a Markdown table: runs, runs in
# which some service fell below its floor (min(before, after)) at some
# moment, runs whose end state misses a required rate, and runs that ended
# degraded (the target no longer fit).
#
# usage: tools/survive-figures.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
migserve="${1:-build}/migserve"
profiles=data/profiles/a100-80gb.csv
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

for w in day night; do
  cp "data/workloads/$w.yaml" "$dir/$w-plain.yaml"
  { echo "survive: {domain: gpu, keep: 1}"; cat "data/workloads/$w.yaml"; } \
    > "$dir/$w-survive.yaml"
  for v in plain survive; do
    "$migserve" optimize -w "$dir/$w-$v.yaml" -p "$profiles" --algo milp \
      -o "$dir/$w-$v.json" 2>/dev/null
  done
done

field() {  # report key -> value
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

echo "| deployments | transition | runs | below a floor | end short | ended degraded |"
echo "|---|---|---|---|---|---|"
for v in plain survive; do
  for pair in "night day" "day night"; do
    set -- $pair
    from="$dir/$1-$v.json" to="$dir/$2-$v.json"
    "$migserve" simulate --from "$from" --to "$to" --nodes 3 \
      --report "$dir/base.json" > /dev/null 2>&1
    makespan=$(field "$dir/base.json" makespan_s)
    runs=0 dipped=0 short=0 degraded=0
    for node in 0 1 2; do
      for index in 0 1 2 3 4 5 6 7; do
        for share in 0.2 0.5 0.8; do
          at=$(python3 -c "print($share * $makespan)")
          "$migserve" simulate --from "$from" --to "$to" --nodes 3 \
            --lose-gpu "node-$node/$index" --lose-at "$at" \
            --report "$dir/run.json" > /dev/null 2>&1 || true
          runs=$((runs + 1))
          read -r d s g < <(python3 - "$dir/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
end_short = any(s["final"] < s["required"] * (1 - 1e-9) for s in r["services"])
print(int(bool(r["short_services"])), int(end_short), int("degraded" in r))
PY
)
          dipped=$((dipped + d)) short=$((short + s)) degraded=$((degraded + g))
        done
      done
    done
    echo "| $v | $1 to $2 | $runs | $dipped | $short | $degraded |"
  done
done
