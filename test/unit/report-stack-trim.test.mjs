// The report's JS and Python stacks cut to the user's frames, by the one
// formatter (the native core's): real stacks as the runners, node and
// pytest produce them, with node:internal, the runners' packages, installed
// Python packages and mate-guard's own frames dropped and counted.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const require = createRequire(import.meta.url);
const { formatReport } = await import(path.join(ROOT, 'packages/core-native/dist/report/format.js'));
const { defaultDropDirs, machineryPackages } = require('../../packages/core-native/dist/report/machinery.js');
const overflow = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/events/overflow.json'), 'utf8'));

const lines = (s) =>
  s
    .trim()
    .split('\n')
    .map((l) => `    ${l.trim()}`);

// The "allocated at" lines of a report whose allocation stack is `stack`,
// written by a process whose machinery is `dirs` and `packages`.
function allocatedAt(stack, { dirs = [], packages = machineryPackages(ROOT) } = {}) {
  const e = {
    ...overflow,
    runtime: process.execPath,
    machineryDirs: dirs,
    machineryPackages: packages,
    allocation: { ...overflow.allocation, allocStack: stack.join('\n') },
  };
  const out = formatReport(e).split('\n');
  const from = out.indexOf('==mate-guard== allocated at:');
  assert.ok(from >= 0, out.join('\n'));
  const shown = [];
  for (const l of out.slice(from + 1)) {
    if (!l.startsWith('==mate-guard==   ')) break;
    shown.push(l.slice('==mate-guard==   '.length));
  }
  return shown;
}
const frame = (l) => l.trim();

test("jest-circus frames under the user's TypeScript line are dropped and counted", () => {
  const stack = lines(`
    at makeBuffer (/p/test/shared.ts:11:30)
    at Object.<anonymous> (/p/test/alloc.test.ts:16:33)
    at Promise.finally.completed (/p/node_modules/jest-circus/build/jestAdapterInit.js:1834:28)
    at new Promise (<anonymous>)
    at callAsyncCircusFn (/p/node_modules/jest-circus/build/jestAdapterInit.js:1774:10)
    at _callCircusTest (/p/node_modules/jest-circus/build/jestAdapterInit.js:1167:40)
    at _runTestInContext (/p/node_modules/jest-circus/build/jestAdapterInit.js:1103:3)
    at runTestWithContext (/p/node_modules/jest-circus/build/jestAdapterInit.js:996:5)`);
  assert.deepEqual(
    allocatedAt(stack),
    [frame(stack[0]), frame(stack[1]), '… 6 runner frames'],
    'V8 builtins between runner frames go too',
  );
});

test('vitest runner and vite module-runner frames (file URLs) are dropped', () => {
  const stack = lines(`
    at /p/test/top.test.ts:5:28
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
    at async VitestModuleEvaluator._runInlinedModule (file:///p/node_modules/vitest/dist/module-evaluator.js:206:4)
    at async VitestModuleRunner.directRequest (file:///p/node_modules/vite/dist/node/module-runner.js:1262:59)
    at async file:///p/node_modules/@vitest/runner/dist/chunk-artifact.js:2457:5
    at async collectTests (file:///p/node_modules/@vitest/runner/dist/chunk-artifact.js:2433:3)`);
  assert.deepEqual(allocatedAt(stack), [frame(stack[0]), '… 5 runner frames']);
});

test('mocha and node:internal frames go, user frames keep their order across them; one is a frame, not frames', () => {
  const stack = lines(`
    at fill (file:///p/lib/io.mjs:3:10)
    at Context.<anonymous> (/p/test/io.spec.cjs:8:5)
    at callFn (/p/node_modules/.pnpm/mocha@12.0.0/node_modules/mocha/lib/runnable.js:366:21)
    at Module._compile (node:internal/modules/cjs/loader:1521:14)
    at eval (eval at load (/p/test/helper.js:2:3), <anonymous>:1:1)
    at EventEmitter.emit (node:events:524:28)`);
  assert.deepEqual(allocatedAt(stack), [frame(stack[0]), frame(stack[1]), frame(stack[4]), '… 3 runner frames']);
  assert.deepEqual(allocatedAt(stack.slice(0, 3)), [frame(stack[0]), frame(stack[1]), '… 1 runner frame']);
});

test("mate-guard's own packages are dropped by their resolved directories (packages/*/dist here)", () => {
  const own = path.join(ROOT, 'packages', 'core-native', 'dist', 'realm.js');
  const jestEnv = path.join(ROOT, 'packages', 'jest-env', 'dist', 'environment.js');
  const user = path.join(ROOT, 'examples', 'jest', 'overflow.test.js');
  const stack = [
    `    at Function.alloc (${own}:120:11)`,
    `    at Object.<anonymous> (${user}:8:24)`,
    `    at JestEnv.handleTestEvent (${jestEnv}:90:3)`,
    '    at Object.<anonymous> (/x/node_modules/@mate-guard/core/dist/install.js:1:1)',
  ];
  const shown = allocatedAt(stack, { dirs: defaultDropDirs(ROOT) });
  assert.equal(shown.length, 2, shown.join('\n'));
  assert.match(shown[0], /^at Object\.<anonymous> \(\S*overflow\.test\.js:8:24\)$/);
  assert.equal(shown[1], '… 3 runner frames');
});

test("the machinery packages are mate-guard's own and each installed runner package's mateGuard.stackRoots", () => {
  const roots = ['jest-env', 'mocha-plugin', 'node-test', 'vitest-plugin'].flatMap(
    (pkg) => require(path.join(ROOT, 'packages', pkg, 'package.json')).mateGuard.stackRoots,
  );
  assert.ok(roots.includes('jest-*') && roots.includes('@vitest/*') && roots.includes('mocha'), roots.join(' '));
  assert.deepEqual(new Set(machineryPackages(ROOT)), new Set(['@mate-guard/*', 'source-map-support', ...roots]));
  // An event that names no packages: a runner's node_modules frame is the user's to see.
  const stack = ['    at run (/p/node_modules/jest-circus/build/run.js:1:2)', '    at t (/p/a.test.js:3:4)'];
  assert.deepEqual(allocatedAt(stack, { packages: [] }), stack.map(frame));
  assert.deepEqual(allocatedAt(stack), [frame(stack[1]), '… 1 runner frame']);
});

test('a short stack with no user frame is kept whole: the runner itself allocated', () => {
  const stack = lines(`
    at Buffer.concat (node:buffer:598:13)
    at readAll (/p/node_modules/jest-runtime/build/index.js:10:2)`);
  assert.deepEqual(allocatedAt(stack), stack.map(frame));
});

test("a long stack with no user frame (an array freed as pytest's call of the test returned) keeps its three innermost frames and counts the rest", () => {
  const sp = '/usr/lib/python3/site-packages';
  const hook = (n) =>
    [
      `    at _multicall (${sp}/pluggy/_callers.py:121)`,
      `    at _hookexec (${sp}/pluggy/_manager.py:120)`,
      `    at __call__ (${sp}/pluggy/_hooks.py:512)`,
    ].slice(0, n);
  const stack = [
    `    at pytest_pyfunc_call (${sp}/_pytest/python.py:166)`,
    ...hook(3),
    `    at runtest (${sp}/_pytest/python.py:1720)`,
    `    at pytest_runtest_call (${sp}/_pytest/runner.py:179)`,
    ...hook(3),
    `    at pytest_runtestloop (${sp}/_pytest/main.py:396)`,
    ...hook(3),
    `    at console_main (${sp}/_pytest/config/__init__.py:223)`,
    `    at <module> (${sp}/pytest/__main__.py:9)`,
    '    at _run_code (<frozen runpy>:88)',
    '    at _run_module_as_main (<frozen runpy>:198)',
  ];
  assert.deepEqual(allocatedAt(stack), [...stack.slice(0, 3).map(frame), `… ${stack.length - 3} runner frames`]);
});
