#!/usr/bin/env bash
# docs/autoscale.md's migration of a workload file to a ServingWorkload, run
# as written on a shipped workload (kubectl apply replaced by a file): the
# object it makes is valid against the ServingWorkload's schema
# (deploy/base/crd.yaml, tools/k8s-validate) and its spec is the file.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: $0 OUT_DIR}
mkdir -p "$out"
# The snippet: from its "{ printf" line to the "| kubectl apply -f -" that
# ends it, indented four spaces in the docs.
snippet=$(sed -n '/^    { printf .apiVersion: migserve.io/,/| kubectl apply -f -$/p' \
  docs/autoscale.md | sed 's/^    //')
[[ -n $snippet ]] || { echo "docs/autoscale.md: the migration snippet is gone" >&2; exit 1; }
cp data/workloads/day.yaml "$out/W.yaml"
(cd "$out" && eval "${snippet/| kubectl apply -f -/> workload.yaml}")
node tools/k8s-validate/validate.mjs "$out/workload.yaml"
# The spec is the file, field for field (node from tools/k8s-validate,
# whose packages have a YAML reader).
out=$(cd "$out" && pwd)
cd tools/k8s-validate
node --input-type=module -e '
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { isDeepStrictEqual } from "node:util";
const [made, file] = process.argv.slice(1).map((f) => parse(readFileSync(f, "utf8")));
if (made.kind !== "ServingWorkload" || !isDeepStrictEqual(made.spec, file)) {
  console.error("the ServingWorkload made is not the workload file");
  process.exit(1);
}' "$out/workload.yaml" "$out/W.yaml"
