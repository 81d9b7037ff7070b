// Checks what headless Chromium made of report.html (tools/browser-test.sh):
// one instance element per instance of both deployments, one timeline bar
// per action of the plan, every service's capacity at or above its floor,
// the freed GPUs named, a screenshot written, and a silent console; and a
// 40-service report whose services all look different and whose filter
// works.
'use strict';
const fs = require('fs');
const path = require('path');

const out = process.argv[2];
const read = (name) => fs.readFileSync(path.join(out, name), 'utf8');
const json = (name) => JSON.parse(read(name));
const failures = [];
const expect = (ok, what) => { if (!ok) failures.push(what); };
const count = (text, re) => (text.match(re) || []).length;
const consoleLines = (log) => log.split('\n').filter((l) => l.includes(':CONSOLE'));

const dom = read('dom.html');
const instances = (d) => d.gpus.reduce((n, g) => n + g.instances.length, 0);
const before = json('before.json');
const after = json('after.json');
const plan = json('plan.json');
const sim = json('sim.json');

const drawn = count(dom, /<g class="instance/g);
expect(drawn === instances(before) + instances(after),
       `${drawn} instance elements, want ${instances(before)} + ${instances(after)}`);
const bars = count(dom, /<rect class="action/g);
expect(bars === plan.actions.length && bars === sim.timeline.length,
       `${bars} timeline bars, want ${plan.actions.length} (the plan's actions)`);
for (const kind of ['create', 'delete', 'migrate', 'repartition']) {
  const want = plan.actions.filter((a) => a.kind === kind).length;
  const got = count(dom, new RegExp(`<rect class="action" data-id="\\d+" data-kind="${kind}"`, 'g'));
  expect(got === want, `${got} ${kind} bars, want ${want}`);
}
const capacities = [...dom.matchAll(/<svg class="capacity" data-service="([^"]*)" data-lowest="([^"]*)" data-floor="([^"]*)"/g)];
expect(capacities.length === sim.services.length,
       `${capacities.length} capacity charts, want ${sim.services.length}`);
for (const [, service, lowest, floor] of capacities) {
  expect(Number(lowest) >= Number(floor) * (1 - 1e-9),
         `${service} dipped to ${lowest} below its floor ${floor}`);
}
const freed = dom.match(/data-freed="(\d+)"/);
expect(freed && Number(freed[1]) === 12, `freed GPUs: ${freed && freed[1]}, want 12`);
expect(dom.includes('<h2>The transition</h2>'), 'no transition section');

// The 40-service report: a legend entry per service, no two alike in
// colour and pattern; each instance carries its service's key; the
// patterned services' instances wear their pattern; the filter to s13
// fades every other instance and keeps s13's.
const dom40 = read('dom40.html');
const legend = [...dom40.matchAll(/<a class="legend-item" href="#only-(s\d+)" data-service="([^"]*)" data-colour="([^"]*)" data-pattern="(\d)"/g)];
expect(legend.length === 40, `${legend.length} legend entries, want 40`);
const looks = new Set(legend.map(([, , , colour, pattern]) => `${colour}/${pattern}`));
expect(looks.size === 40, `${looks.size} distinct colour-and-pattern pairs among 40 services`);
const keyOf = new Map(legend.map(([, key, service]) => [service, key]));
const patternOf = new Map(legend.map(([, key, , , pattern]) => [key, Number(pattern)]));
const placed = [...dom40.matchAll(/<g class="instance( idle| (s\d+))" [^>]*data-service="([^"]*)">(.*?)<\/g>/g)];
const d40 = json('d40.json');
expect(placed.length === instances(d40), `${placed.length} instances drawn, want ${instances(d40)}`);
let wrongKey = 0, wrongPattern = 0, inS13 = 0;
for (const [, , key, service, body] of placed) {
  if (!key) continue;
  if (keyOf.get(service) !== key) ++wrongKey;
  const pattern = patternOf.get(key);
  if (body.includes(`fill="url(#pattern-${pattern})"`) !== (pattern > 0)) ++wrongPattern;
  if (key === 's13') ++inS13;
}
expect(wrongKey === 0, `${wrongKey} instances carry another service's key`);
expect(wrongPattern === 0, `${wrongPattern} instances without their service's pattern`);
expect(inS13 > 0, 'no instance of s13 to filter to');
const filter = read('filter-dom.html').match(/data-filter="(\d+) (\d+) (\d+)"/);
expect(filter && Number(filter[1]) === placed.length &&
       Number(filter[2]) === placed.length - inS13 && Number(filter[3]) === inS13,
       `filter to s13: ${filter ? filter.slice(1).join(' ') : 'not run'} (all, faded, kept), ` +
       `want ${placed.length} ${placed.length - inS13} ${inS13}`);

const png = fs.readFileSync(path.join(out, 'report.png'));
expect(png.length > 20000 && png.subarray(1, 4).toString() === 'PNG',
       `screenshot: ${png.length} bytes`);

const logged = consoleLines(read('console.log')).concat(consoleLines(read('console40.log')));
expect(logged.length === 0, `the page logged: ${logged.join(' | ')}`);
expect(consoleLines(read('bad-console.log')).length === 1,
       'the console check missed a page that logs an error');

if (failures.length > 0) {
  for (const f of failures) console.error(`browser-test: ${f}`);
  process.exit(1);
}
console.log(`browser-test: ${drawn} instances, ${bars} actions, ` +
            `${capacities.length} services within their floors; ${out}/report.png`);
