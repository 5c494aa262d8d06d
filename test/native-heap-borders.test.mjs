// Correct C++ whose memory crosses module borders passes its suite with the
// addon's whole heap guarded, under guard-run and every runner: a vector
// grown by a template node exports too (the addon's calls now run its own
// copy: its own weak functions win), strings grown inside libstdc++,
// libc allocating what the addon frees and growing what it allocated, Node
// freeing addon memory. No report, every test passes, and the free router
// did bring guarded pointers home (without it glibc aborts the process).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { BIN, ROOT, guardRun, run } from './helpers/run.mjs';

const GLOB = '*buggy_addon.node';
const FIX = path.join(ROOT, 'test', 'fixtures');
const CASES = 5; // borders-cases.cjs's four, and the routed-frees check

function assertClean(r, passed) {
  assert.equal(r.code, 0, r.output);
  assert.equal(r.signal, null, r.output);
  assert.doesNotMatch(r.output, /==mate-guard==|invalid pointer|Worker exited unexpectedly/, r.output);
  assert.match(r.output, passed, r.output);
  assert.match(r.output, /\[mate-guard\] summary: [1-9]\d* allocations guarded/, r.output);
}

test('mate guard-run --native <glob>', async () => {
  const r = await guardRun(['--native', GLOB], [path.join(FIX, 'native-heap', 'borders.js')]);
  assertClean(r, /^ok: a Buffer over addon memory that Node frees when collected$/m);
  assert.equal((r.output.match(/^ok: /gm) ?? []).length, 4, r.output);
  const routed = Number(/^routed frees: (\d+)$/m.exec(r.output)?.[1]);
  // libstdc++'s string growth and Node's free of the Buffer's memory (the vector stays in the addon).
  assert.ok(routed >= 2, `other modules freed guarded pointers: ${routed}\n${r.output}`);
});

describe('Vitest', () => {
  const cwd = path.join(FIX, 'vitest', 'borders');
  const mateVitest = path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs');
  for (const pool of ['forks', 'threads']) {
    test(`mate-vitest --pool ${pool} --guard-native <glob>`, async () => {
      const r = await run(
        process.execPath,
        [mateVitest, 'run', '--pool', pool, '--guard-alloc', '--guard-native', GLOB],
        { cwd },
      );
      assertClean(r, new RegExp(`Tests\\s+${CASES} passed`));
    });
  }
});

test('Jest: mate-jest --guard-native <glob>', async () => {
  const mateJest = path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js');
  const r = await run(process.execPath, [
    mateJest,
    '--guard-alloc',
    '--guard-native',
    GLOB,
    '-c',
    path.join(FIX, 'jest', 'borders', 'jest.config.js'),
  ]);
  assertClean(r, new RegExp(`Tests:\\s+${CASES - 1} passed`)); // no routed-frees check there (see the fixture)
});

describe('Mocha', () => {
  const cwd = path.join(FIX, 'mocha');
  for (const parallel of [[], ['--parallel']]) {
    test(`mocha ${parallel.join(' ')} --guard-native=<glob>`.replace('  ', ' '), async () => {
      const r = await run(
        path.join(BIN, 'mocha'),
        [
          ...parallel,
          '--require',
          '@mate-guard/mocha',
          '--guard-alloc',
          `--guard-native=${GLOB}`,
          'borders/borders.spec.cjs',
        ],
        { cwd },
      );
      assertClean(r, new RegExp(`${CASES} passing`));
    });
  }
});
