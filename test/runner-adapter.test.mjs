// The runner contract: a runner's package adapts it for core (package.json's
// `mateGuard.runner` and an `./adapter` export), and core keeps no runner
// list. A fifth runner's stub (test/fixtures/runner-adapter/ava-stub), added
// with no change to core, is installed in a checkout of its own: `mate
// replay` of a run recorded under it finds its adapter, runs its CLI as
// installed there, narrowed to the failing test as the adapter selects it,
// with the recorded settings, judged by the adapter's option description;
// `mate options` there prints its config column among the others; a report
// there drops the frames of the package its adapter names as a stack root.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { guardRun, MATE, ROOT, run } from './helpers/run.mjs';

const STUB = path.join(ROOT, 'test', 'fixtures', 'runner-adapter', 'ava-stub');
// The stub runner's own library: its adapter's package.json names it in mateGuard.stackRoots.
const STUB_LIBRARY = path.join(ROOT, 'test', 'fixtures', 'runner-adapter', 'ava-stub-runner');
const tmp = (prefix) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));

/** A checkout with the stub runner's package installed and one test file. */
function checkout() {
  const co = tmp('mate-adapter-checkout-');
  fs.cpSync(STUB, path.join(co, 'node_modules', '@mate-guard', 'ava-stub'), { recursive: true });
  fs.mkdirSync(path.join(co, 'test'));
  fs.writeFileSync(path.join(co, 'test', 'a.test.js'), '');
  return co;
}

/** A run directory as the stub runner's run would leave it: its record and one violation in `test`. */
function recorded(co, argv, test) {
  const dir = tmp('mate-adapter-run-');
  fs.writeFileSync(
    path.join(dir, 'replay.json'),
    JSON.stringify({
      tool: 'mate-guard',
      version: 1,
      runner: 'ava-stub',
      cwd: co,
      execArgv: [],
      argv,
      settings: { mode: 'head', alignment: 16 },
      explicit: [],
    }),
  );
  fs.writeFileSync(
    path.join(dir, 'mate-guard-4242-1.json'),
    JSON.stringify({ tool: 'mate-guard', kind: 'heap-buffer-overflow', pid: 4242, test }),
  );
  return dir;
}

describe('a runner adapted by its own package, unknown to core', () => {
  test("mate replay finds the stub runner's adapter in the checkout and replays the failing test through its CLI; exit is the runner's", async () => {
    const co = checkout();
    const dir = recorded(
      co,
      ['/ci/node_modules/.bin/mate-ava', 'test/a.test.js', '--serial', '--verbose', '--match', 'other'],
      'test/a.test.js > adds > two numbers',
    );
    const r = await run(process.execPath, [MATE, 'replay', dir], { cwd: co });
    assert.equal(r.code, 3, r.output);
    assert.match(
      r.stderr,
      /^\[mate-guard\] replaying test test\/a\.test\.js > adds > two numbers \(ava-stub\) in head mode, alignment 16\n/,
    );
    assert.match(
      r.stderr,
      /^\[mate-guard\] left out of the replay: --verbose \(not a ava-stub argument replay knows: --trust-record takes it\)$/m,
    );
    assert.match(
      r.stderr,
      new RegExp(
        `^\\[mate-guard\\] replay runs in ${co}: \\S+ ${co}/node_modules/@mate-guard/ava-stub/bin/mate-ava\\.mjs test/a\\.test\\.js --serial --match 'adds two numbers'$`,
        'm',
      ),
    );
    assert.equal(r.stdout, 'ava-stub ran ["test/a.test.js","--serial","--match","adds two numbers"] in head mode\n');
  });

  test('a runner no installed package adapts: one line naming the runners this checkout has (exit 2)', async () => {
    const co = checkout();
    const dir = recorded(co, ['mate-tap', 'test/a.test.js'], 'test/a.test.js > adds');
    const rec = JSON.parse(fs.readFileSync(path.join(dir, 'replay.json'), 'utf8'));
    fs.writeFileSync(path.join(dir, 'replay.json'), JSON.stringify({ ...rec, runner: 'tap' }));
    const r = await run(process.execPath, [MATE, 'replay', dir], { cwd: co });
    assert.equal(r.code, 2, r.output);
    assert.equal(
      r.stderr,
      `mate: replay: ${dir}/replay.json names the runner "tap", which no installed @mate-guard package adapts; known here: ava-stub, jest, mocha, node-test, vitest, run\n`,
    );
  });

  test('mate options in a checkout with the stub runner: the combined table has its config column, the columns in runner-name order; --runner prints its package table', async () => {
    const co = checkout();
    const all = await run(process.execPath, [MATE, 'options'], { cwd: co });
    assert.equal(all.code, 0, all.output);
    const heading = all.stdout.split('\n').find((l) => l.startsWith('| flag | environment (`<RUNNER>`'));
    assert.equal(
      heading,
      "| flag | environment (`<RUNNER>`: the runner's name, e.g. VITEST, NODE_TEST) | AVA `ava.guard` key | Jest `testEnvironmentOptions` | Mocha rc key | Vitest `guardAlloc()` option | default | meaning |",
    );
    assert.match(
      all.stdout,
      /^\| `--guard-mode <tail\\\|head>` \| `MATE_<RUNNER>_GUARD_MODE` \| `guard\.mode` \| `guardMode` \| `guard-mode` \| `mode` \| `'tail'` \|/m,
    );
    const own = await run(process.execPath, [MATE, 'options', '--runner', 'ava-stub'], { cwd: co });
    assert.equal(own.code, 0, own.output);
    assert.match(own.stdout, /^\| flag \| environment \| `ava\.guard` key \| default \| meaning \|\n/);
    assert.match(
      own.stdout,
      /^\| `--guard-mode <tail\\\|head>` \| `MATE_AVA_STUB_GUARD_MODE` \| `guard\.mode` \| `'tail'` \|/m,
    );
  });
  test("a report in the stub runner's checkout counts its library's frames as runner frames: the adapter's stack root, recorded in the event", async () => {
    const co = checkout();
    fs.cpSync(STUB_LIBRARY, path.join(co, 'node_modules', 'ava-stub-runner'), { recursive: true });
    const script = path.join(co, 'test', 'overflow.js');
    fs.writeFileSync(
      script,
      `const addon = require(${JSON.stringify(path.join(ROOT, 'examples', 'addon'))});
require('ava-stub-runner').run(function fillsOnePastTheEnd() {
  addon.fillInclusive(Buffer.alloc(64));
});
`,
    );
    const reports = tmp('mate-adapter-reports-');
    const r = await guardRun(['--report-dir', reports], [script], { cwd: co });
    assert.equal(r.code, 139, r.output);
    assert.match(r.output, /==mate-guard== ERROR: heap-buffer-overflow on WRITE/, r.output);
    assert.match(r.output, /^==mate-guard== +at fillsOnePastTheEnd \(/m, r.output);
    assert.doesNotMatch(r.output, /ava-stub-runner/, r.output);
    assert.match(r.output, /^==mate-guard== +… \d+ runner frames$/m, r.output);
    // The event file, in the run's folder under the report directory.
    const [filed] = fs
      .readdirSync(reports, { recursive: true })
      .filter((f) => /(^|\/)mate-guard-\d+-\d+\.json$/.test(f))
      .map((f) => path.join(reports, f));
    const name = path.basename(filed);
    const event = JSON.parse(fs.readFileSync(filed, 'utf8'));
    assert.ok(event.machineryPackages.includes('ava-stub-runner'), JSON.stringify(event.machineryPackages));
    // Named without `*`, the root is resolved to its folder too (a linked install lies outside node_modules).
    const library = path.join(co, 'node_modules', 'ava-stub-runner') + path.sep;
    assert.ok(event.machineryDirs.includes(library), JSON.stringify(event.machineryDirs));
    // The event's own lists decide, whoever reads it: without the root, the library's frames show.
    const raw = tmp('mate-adapter-raw-');
    delete event.text;
    delete event.delivered;
    fs.writeFileSync(path.join(raw, name), JSON.stringify(event));
    const same = await run(process.execPath, [MATE, 'report', raw], { cwd: ROOT });
    assert.doesNotMatch(same.stdout, /ava-stub-runner/, same.stdout);
    fs.writeFileSync(
      path.join(raw, name),
      JSON.stringify({
        ...event,
        machineryPackages: event.machineryPackages.filter((p) => p !== 'ava-stub-runner'),
        machineryDirs: event.machineryDirs.filter((d) => d !== library),
      }),
    );
    const without = await run(process.execPath, [MATE, 'report', raw], { cwd: ROOT });
    assert.match(
      without.stdout,
      /^==mate-guard== +at runTest \(.*node_modules\/ava-stub-runner\/index\.js:\d+:\d+\)$/m,
      without.stdout,
    );
  });
});
