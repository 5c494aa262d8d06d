// The planted bugs as a node:test suite (examples/node-test) under
// @mate-guard/node-test: plain `node --test --require @mate-guard/node-test`
// with MATE_NODE_TEST_GUARD_ALLOC=1, and mate-node-test.
import { execPath } from 'node:process';

import { nativeHeapStep } from '../demo-steps.mjs';

const mateNodeTest = 'packages/node-test/bin/mate-node-test.js';
const file = (name) => `examples/node-test/${name}.test.mjs`;
const ON = { MATE_NODE_TEST_GUARD_ALLOC: '1' };
const plain = (title, args, expect, env = ON) => ({
  title,
  command: execPath,
  args: ['--test', '--require', '@mate-guard/node-test', '--test-reporter=spec', ...args],
  env,
  display: `${Object.entries(env)
    .map(([k, v]) => `${k}=${v} `)
    .join('')}node --test --require @mate-guard/node-test --test-reporter=spec ${args.join(' ')}`,
  expect,
});
const mate = (title, args, expect) => ({
  title,
  command: execPath,
  args: [mateNodeTest, '--test-reporter=spec', ...args],
  display: `mate-node-test --test-reporter=spec ${args.join(' ')}`,
  expect,
});
const testLine = (name, ...titles) => `==mate-guard== test: ${file(name)} > ${titles.join(' > ')}`;

export const title = 'node:test: @mate-guard/node-test and mate-node-test';
export const steps = [
  plain(
    "overflow by one faults: the file's process dies, the test is failed with its report, the other files run",
    [file('overflow'), file('clean')],
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: heap-buffer-overflow on WRITE',
        '1 byte past the end of allocation',
        testLine('overflow', 'overflow by one', 'fills a 64-byte buffer'),
        '✖ fills a 64-byte buffer',
        'node:test process',
        'was killed by a guard fault: heap-buffer-overflow',
        '✔ clean',
        '1 violation, 1 process died',
      ],
    },
  ),
  plain('underflow by one in tail mode: canary damage fails the test', [file('underflow')], {
    exit: 'nonzero',
    output: [
      '✖ reverse-fills a 64-byte buffer',
      '==mate-guard== ERROR: canary-corruption: 1 byte before the start',
      testLine('underflow', 'underflow by one', 'reverse-fills a 64-byte buffer'),
      'rerun with --guard-mode head',
      '1 violation',
    ],
  }),
  mate(
    'underflow by one in head mode faults (mate-node-test takes --guard-mode head)',
    ['--guard-alloc', '--guard-mode', 'head', file('underflow')],
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: heap-buffer-underflow on WRITE',
        testLine('underflow', 'underflow by one', 'reverse-fills a 64-byte buffer'),
        'was killed by a guard fault: heap-buffer-underflow',
      ],
    },
  ),
  mate(
    'overflow into the alignment gap: canary damage fails the test, the rerun at alignment 1 shows the access',
    ['--guard-alloc', file('gap-overflow')],
    {
      exit: 'nonzero',
      output: [
        '✖ writes at index length + 1',
        '==mate-guard== ERROR: canary-corruption: 2 bytes past the end',
        testLine('gap-overflow', 'alignment-gap overflow', 'writes at index length + 1'),
        '[mate-guard] rerun in tail mode with alignment 1',
      ],
    },
  ),
  mate(
    'use-after-free via a retained pointer faults (--expose-gc reaches every test process)',
    ['--guard-alloc', '--expose-gc', file('use-after-free')],
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: heap-use-after-free on WRITE',
        'freed by the garbage collector',
        testLine('use-after-free', 'use-after-free via a retained pointer', 'touches a buffer after the GC freed it'),
      ],
    },
  ),
  nativeHeapStep(mate, file, testLine),
  plain(
    "clean and tagged tests guarded: pass, tags skipped with the reason (node's own skip), summary",
    [file('clean'), file('tagged')],
    {
      exit: 0,
      output: [
        '# guard allocator debug mode does not support graph capture',
        'tagged guard_incompatible',
        '0 violations, 2 tests skipped by tag',
      ],
      notOutput: ['==mate-guard=='],
    },
  ),
  plain(
    'the same tests unguarded: the tagged ones run',
    [file('clean'), file('tagged')],
    {
      exit: 0,
      output: ['ℹ pass 4', 'ℹ skipped 0'],
      notOutput: ['ℹ skipped 1', '[mate-guard]'],
    },
    {},
  ),
];
