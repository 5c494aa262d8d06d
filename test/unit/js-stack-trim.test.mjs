// JS allocation stacks cut to the user's frames: real stacks as the three
// runners and node produce them, with node:internal, the runners' packages
// and mate-guard's own dropped and counted.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const {
  trimJsStack,
  formatDroppedFrames,
  jsFrameLocation,
  defaultDropDirs,
  machineryPackages,
} = require('../../packages/core-native/dist/report/js-stack.js');
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const lines = (s) =>
  s
    .trim()
    .split('\n')
    .map((l) => `    ${l.trim()}`);

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
  const t = trimJsStack(stack, { dropDirs: [] });
  assert.deepEqual(t.frames, [stack[0], stack[1]], 'V8 builtins between runner frames go too');
  assert.equal(t.dropped, 6);
  assert.equal(formatDroppedFrames(t.dropped), '… 6 runner frames');
});

test('vitest runner and vite module-runner frames (file URLs) are dropped', () => {
  const stack = lines(`
    at /p/test/top.test.ts:5:28
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
    at async VitestModuleEvaluator._runInlinedModule (file:///p/node_modules/vitest/dist/module-evaluator.js:206:4)
    at async VitestModuleRunner.directRequest (file:///p/node_modules/vite/dist/node/module-runner.js:1262:59)
    at async file:///p/node_modules/@vitest/runner/dist/chunk-artifact.js:2457:5
    at async collectTests (file:///p/node_modules/@vitest/runner/dist/chunk-artifact.js:2433:3)`);
  const t = trimJsStack(stack, { dropDirs: [] });
  assert.deepEqual(t.frames, [stack[0]]);
  assert.equal(t.dropped, 5);
});

test('mocha and node:internal frames go, user frames keep their order across them', () => {
  const stack = lines(`
    at fill (file:///p/lib/io.mjs:3:10)
    at Context.<anonymous> (/p/test/io.spec.cjs:8:5)
    at callFn (/p/node_modules/.pnpm/mocha@12.0.0/node_modules/mocha/lib/runnable.js:366:21)
    at Module._compile (node:internal/modules/cjs/loader:1521:14)
    at eval (eval at load (/p/test/helper.js:2:3), <anonymous>:1:1)
    at EventEmitter.emit (node:events:524:28)`);
  const t = trimJsStack(stack, { dropDirs: [] });
  assert.deepEqual(t.frames, [stack[0], stack[1], stack[4]]);
  assert.equal(t.dropped, 3);
  assert.equal(formatDroppedFrames(1), '… 1 runner frame');
  assert.equal(formatDroppedFrames(0), '');
});

test("mate-guard's own packages are dropped by their resolved directories (packages/*/dist here)", () => {
  const dirs = defaultDropDirs(ROOT);
  const own = path.join(ROOT, 'packages', 'core-native', 'dist', 'realm.js');
  const jestEnv = path.join(ROOT, 'packages', 'jest-env', 'dist', 'environment.js');
  const stack = [
    `    at Function.alloc (${own}:120:11)`,
    `    at Object.<anonymous> (${path.join(ROOT, 'examples', 'jest', 'overflow.test.js')}:8:24)`,
    `    at JestEnv.handleTestEvent (${jestEnv}:90:3)`,
    '    at Object.<anonymous> (/x/node_modules/@mate-guard/core/dist/install.js:1:1)',
  ];
  const t = trimJsStack(stack, { dropDirs: dirs });
  assert.deepEqual(t.frames, [stack[1]]);
  assert.equal(t.dropped, 3);
});

test("the machinery packages are mate-guard's own and each installed runner package's mateGuard.stackRoots", () => {
  const roots = ['jest-env', 'mocha-plugin', 'node-test', 'vitest-plugin'].flatMap(
    (pkg) => require(path.join(ROOT, 'packages', pkg, 'package.json')).mateGuard.stackRoots,
  );
  assert.ok(roots.includes('jest-*') && roots.includes('@vitest/*') && roots.includes('mocha'), roots.join(' '));
  assert.deepEqual(new Set(machineryPackages(ROOT)), new Set(['@mate-guard/*', 'source-map-support', ...roots]));
  // Given no packages, a runner's node_modules frame is the user's to see.
  const stack = ['    at run (/p/node_modules/jest-circus/build/run.js:1:2)', '    at t (/p/a.test.js:3:4)'];
  assert.equal(trimJsStack(stack, { dropDirs: [], packages: [] }).dropped, 0);
  assert.equal(trimJsStack(stack, { dropDirs: [], packages: machineryPackages(ROOT) }).dropped, 1);
});

test('a stack with no user frame is kept whole: the runner itself allocated', () => {
  const stack = lines(`
    at Buffer.concat (node:buffer:598:13)
    at readAll (/p/node_modules/jest-runtime/build/index.js:10:2)`);
  assert.deepEqual(trimJsStack(stack, { dropDirs: [] }), { frames: stack, dropped: 0 });
  assert.deepEqual(trimJsStack(stack.join('\n') + '\n', { dropDirs: [] }).frames, stack, 'text in, lines out');
});

test('frame locations: parenthesised, bare, file URLs, eval origins', () => {
  assert.equal(jsFrameLocation('    at f (/a/b.js:1:2)'), '/a/b.js');
  assert.equal(jsFrameLocation('    at /a/b c.ts:3:4'), '/a/b c.ts');
  assert.equal(jsFrameLocation('    at async file:///a/b%20c.mjs:3:4'), '/a/b c.mjs');
  assert.equal(jsFrameLocation('    at async run (file:///a/b.mjs:3:4)'), '/a/b.mjs');
  assert.equal(jsFrameLocation('    at new Promise (<anonymous>)'), '<anonymous>');
  assert.equal(
    jsFrameLocation('    at eval (eval at load (/p/h.js:2:3), <anonymous>:1:1)'),
    'eval at load (/p/h.js:2:3), <anonymous>',
  );
  assert.equal(jsFrameLocation('Error: boom'), undefined);
});
