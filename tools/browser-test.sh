#!/usr/bin/env bash
# The browser test of `migserve report` (ctest browser_report): renders the
# report of the shipped day -> night transition in headless Chromium, takes
# a screenshot, and checks the DOM Chromium built and its console
# (tools/browser-test/check.js). Usage: browser-test.sh MIGSERVE SRC OUT.
# Exits 77 (skipped) when chromium is not installed; `make test` installs it.
set -euo pipefail
bin=$1 src=$2 out=$3
if ! command -v chromium >/dev/null; then
  echo "browser-test: chromium is not installed (tools/install-deps.sh --test)" >&2
  exit 77
fi
rm -rf "$out" && mkdir -p "$out"
day=$src/data/deployments/day.json night=$src/data/deployments/night.json
"$bin" plan --from "$day" --to "$night" --nodes 3 -o "$out/plan.json" 2>/dev/null
"$bin" simulate --from "$day" --to "$night" --nodes 3 --report "$out/sim.json" \
  --before "$out/before.json" --after "$out/after.json" >/dev/null 2>&1
"$bin" report -d "$out/after.json" --from "$out/before.json" \
  -w "$src/data/workloads/night.yaml" -p "$src/data/profiles/a100-80gb.csv" \
  --plan "$out/plan.json" --simulation "$out/sim.json" \
  --title "day -> night" -o "$out/report.html"
browse() {  # browse PAGE LOG ARGS...: headless Chromium, console to LOG
  local page=$1 log=$2
  shift 2
  # HOME: Chromium writes its profile there; keep it out of the user's.
  HOME=$out timeout 120 chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --hide-scrollbars --enable-logging=stderr --v=0 "$@" "file://$page" 2>"$log"
}
browse "$out/report.html" "$out/console.log" --dump-dom >"$out/dom.html"
browse "$out/report.html" "$out/screenshot.log" --window-size=1300,2200 \
  --screenshot="$out/report.png" >/dev/null
# A report of 40 services: distinct colour-and-pattern pairs in the
# legend, and its filter (#only-s<k>) seen by a page that reads the
# computed opacity of every instance in a frame.
prof=$src/data/profiles/a100-80gb.csv
"$bin" generate -p "$prof" --services 40 --seed 7 -o "$out/w40.yaml" 2>/dev/null
"$bin" optimize -w "$out/w40.yaml" -p "$prof" --algo greedy -o "$out/d40.json" 2>/dev/null
"$bin" report -d "$out/d40.json" -w "$out/w40.yaml" -p "$prof" \
  --title "40 services" -o "$out/report40.html"
browse "$out/report40.html" "$out/console40.log" --dump-dom >"$out/dom40.html"
cp "$src/tools/browser-test/filter.html" "$out/filter.html"
browse "$out/filter.html" "$out/filter.log" --allow-file-access-from-files \
  --virtual-time-budget=10000 --dump-dom >"$out/filter-dom.html"
# The console check must be able to fail: a page that logs an error.
printf '<html><body><script>console.error("seen")</script></body></html>\n' \
  >"$out/bad.html"
browse "$out/bad.html" "$out/bad-console.log" --dump-dom >/dev/null
node "$src/tools/browser-test/check.js" "$out"
