// Checks what headless Chromium made of report.html (tools/browser-test.sh):
// one instance element per instance of both deployments, one timeline bar
// per action of the plan, every service's capacity at or above its floor,
// the freed GPUs named, a screenshot written, and a silent console.
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

const png = fs.readFileSync(path.join(out, 'report.png'));
expect(png.length > 20000 && png.subarray(1, 4).toString() === 'PNG',
       `screenshot: ${png.length} bytes`);

const logged = consoleLines(read('console.log'));
expect(logged.length === 0, `the page logged: ${logged.join(' | ')}`);
expect(consoleLines(read('bad-console.log')).length === 1,
       'the console check missed a page that logs an error');

if (failures.length > 0) {
  for (const f of failures) console.error(`browser-test: ${f}`);
  process.exit(1);
}
console.log(`browser-test: ${drawn} instances, ${bars} actions, ` +
            `${capacities.length} services within their floors; ${out}/report.png`);
