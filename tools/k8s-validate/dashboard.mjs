// Reads the Grafana dashboard ConfigMap (deploy/monitoring/dashboard.yaml),
// checks the dashboard's shape (every panel titled, placed and with at least
// one query; every migserve_ metric a query reads is one that migserve
// exports, named in METRICS), and writes every query as a recording rule of
// a Prometheus rules file to stdout, for promtool to parse
// (tools/dashboard-test.sh). Usage: node dashboard.mjs DASHBOARD.yaml METRICS
import { readFileSync } from "node:fs";
import { parse } from "yaml";

const [file, metricsFile] = process.argv.slice(2);
const fail = (message) => {
  console.error(`${file}: ${message}`);
  process.exit(1);
};
const map = parse(readFileSync(file, "utf8"));
if (map?.kind !== "ConfigMap") fail("not a ConfigMap");
const text = map.data?.["migserve.json"];
if (typeof text !== "string") fail("data.migserve.json: missing");
let dashboard;
try {
  dashboard = JSON.parse(text);
} catch (e) {
  fail(`data.migserve.json: ${e.message}`);
}
const exported = new Set(
  readFileSync(metricsFile, "utf8").split("\n").filter((l) => l.length > 0));
if (!Array.isArray(dashboard.panels) || dashboard.panels.length === 0) {
  fail("no panels");
}
const rules = [];
dashboard.panels.forEach((panel, i) => {
  const where = `panels[${i}] (${panel.title ?? "untitled"})`;
  if (!panel.title) fail(`${where}: no title`);
  const g = panel.gridPos;
  if (!g || [g.x, g.y, g.w, g.h].some((v) => !Number.isInteger(v))) {
    fail(`${where}: gridPos needs whole x, y, w and h`);
  }
  if (!Array.isArray(panel.targets) || panel.targets.length === 0) {
    fail(`${where}: no query`);
  }
  panel.targets.forEach((target, j) => {
    if (typeof target.expr !== "string" || target.expr.length === 0) {
      fail(`${where}: targets[${j}]: no expr`);
    }
    for (const name of target.expr.match(/migserve_[a-z0-9_]+/g) ?? []) {
      if (!exported.has(name)) {
        fail(`${where}: targets[${j}]: ${name} is not a metric migserve exports`);
      }
    }
    rules.push({ record: `dashboard:panel${i + 1}:${target.refId}`, expr: target.expr });
  });
});
console.log(JSON.stringify({ groups: [{ name: "dashboard", rules }] }, null, 2));
