#!/usr/bin/env bash
# Runs a fixed set of migserve commands (every command whose output a
# refactoring must not change) with one binary and writes each command's
# stdout, stderr, exit code and written files under OUT_DIR, with timings,
# temporary paths and build ids masked. Two runs, one per binary, are then
# compared with `diff -r`:
#
#   tools/behaviour-check.sh /tmp/old/migserve /tmp/before
#   tools/behaviour-check.sh build/migserve /tmp/after
#   diff -r /tmp/before /tmp/after
#
# Credits are computed afresh for each run (MIGSERVE_CREDIT_CACHE=off), and
# searches that depend on time (mcts, two-phase) are left out: what remains is
# deterministic.
#
# usage: tools/behaviour-check.sh BINARY OUT_DIR
set -uo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 BINARY OUT_DIR" >&2; exit 2; }
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
out="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
[[ -x "$bin" ]] || { echo "behaviour-check: $bin: not executable" >&2; exit 2; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export MIGSERVE_CREDIT_CACHE=off
cd "$root"

W=data/workloads
P=data/profiles/a100-80gb.csv
D=data/deployments
cat >"$work/fleet.yaml" <<'EOF'
nodes:
  - {name: gpu-a1, gpu: A100-SXM4-80GB, gpus: 8}
  - {name: gpu-a2, gpu: A100-SXM4-80GB, gpus: 8}
  - {name: gpu-a3, gpu: A100-SXM4-80GB, gpus: 8}
EOF

# Masks what changes from run to run: seconds (the milp phases and the
# planner too), temporary paths, versions.
mask() {
  sed -E \
    -e "s#$work#WORK#g" -e "s#$out#OUT#g" \
    -e 's/("(seconds|[a-z_]*_seconds|wall_s|elapsed_s|time_s)": *)[0-9.e+-]+/\1T/g' \
    -e 's/("(incumbent|model|root|search|planner)": *)[0-9][0-9.e+-]*/\1T/g' \
    -e 's/[0-9]+(\.[0-9]+)? ?(ms|s)\b/T\2/g' \
    -e 's/migserve [0-9]+\.[0-9]+\.[0-9]+[^ "]*/migserve VERSION/g' \
    -e 's/(build|commit)[ :=]+[0-9a-f]{7,40}/\1 ID/g'
}

# run NAME ARGS...: runs migserve ARGS in a fresh folder $work/NAME (the
# command's files go there) and keeps what it printed and wrote.
run() {
  local name="$1"
  shift
  local dir="$work/$name"
  mkdir -p "$dir"
  (cd "$dir" && "$bin" "$@" >"$dir.stdout" 2>"$dir.stderr")
  echo $? >"$dir.rc"
  mkdir -p "$out/$name"
  mask <"$dir.stdout" >"$out/$name/stdout"
  mask <"$dir.stderr" >"$out/$name/stderr"
  cp "$dir.rc" "$out/$name/rc"
  (cd "$dir" && find . -type f | sort | while read -r f; do
    mkdir -p "$out/$name/files/$(dirname "$f")"
    mask <"$f" >"$out/$name/files/$f"
  done)
}
a() { echo "$root/$1"; }

for w in normal-1 day night; do
  for algo in milp greedy whole all-1g mix parvagpu; do
    run "optimize-$w-$algo" optimize -w "$(a $W/$w.yaml)" -p "$(a $P)" \
      --algo "$algo" -o out.json
  done
done
run optimize-from optimize -w "$(a $W/night.yaml)" -p "$(a $P)" --algo milp \
  --from "$(a $D/day.json)" -o out.json
run optimize-from-back optimize -w "$(a $W/day.yaml)" -p "$(a $P)" \
  --algo milp --from "$(a $D/night.json)" -o out.json
run optimize-inventory optimize -w "$(a $W/day.yaml)" -p "$(a $P)" \
  --algo milp --inventory "$work/fleet.yaml" -o out.json
run optimize-paper optimize -w "$(a $W/lognormal-1.yaml)" -p "$(a $P)" \
  --algo greedy --paper-score -o out.json
run compare compare -w "$(a $W/day.yaml)" -p "$(a $P)" --time-limit 1 \
  --format json
run validate validate -w "$(a $W/day.yaml)" -p "$(a $P)" -d "$(a $D/day.json)"
run validate-wrong validate -w "$(a $W/day.yaml)" -p "$(a $P)" \
  -d "$(a $D/night.json)"
run validate-survive validate -w "$(a $W/day.yaml)" -p "$(a $P)" \
  -d "$(a $D/day-survive.json)"
run place place -d "$(a $D/day.json)" --inventory "$work/fleet.yaml" -o out.json
for f in json text; do
  run "plan-$f" plan --from "$(a $D/day.json)" --to "$(a $D/night.json)" \
    -p "$(a $P)" --format "$f"
done
run plan-survive plan --from "$(a $D/night-survive.json)" \
  --to "$(a $D/day-survive.json)" --spare-gpus 16 --format json
run simulate simulate --from "$(a $D/day.json)" --to "$(a $D/night.json)" \
  --report report.json --before before.json --after after.json
run simulate-fail simulate --from "$(a $D/day.json)" --to "$(a $D/night.json)" \
  --fail-action 3
run simulate-lose simulate --from "$(a $D/night.json)" --to "$(a $D/day.json)" \
  --lose-gpu node-0/1 --lose-at 5
for flavor in device-plugin dra gpu-operator; do
  run "export-$flavor" export -d "$(a $D/day.json)" --flavor "$flavor" \
    --serving "$(a examples/triton/serving.yaml)" -o .
done
run export-proxy export -d "$(a $D/night.json)" -o .
run show show -d "$(a $D/day.json)"
run gpus gpus
run gpus-json gpus --format json
run models models -p "$(a $P)"
for routing in weighted round-robin least-outstanding; do
  run "serve-$routing" serve -d "$(a $D/day.json)" -w "$(a $W/day.yaml)" \
    -p "$(a $P)" --routing "$routing" --format json
done
run serve-default serve -d "$(a $D/night.json)" -w "$(a $W/night.yaml)" \
  -p "$(a $P)"
run serve-gamma serve -d "$(a $D/day.json)" -w "$(a $W/day.yaml)" \
  -p "$(a $P)" --arrivals gamma --cv 2
run generate generate -p "$(a $P)" --services 20 --seed 7
run replay replay --trace "$(a data/traces/normal-1-flapping.csv)" \
  -w "$(a $W/normal-1.yaml)" -p "$(a $P)" --format json
run report report -d "$(a $D/night.json)" -w "$(a $W/night.yaml)" \
  -p "$(a $P)" --from "$(a $D/day.json)" -o report.html
echo "behaviour-check: $(ls "$out" | wc -l) commands into $out" >&2
