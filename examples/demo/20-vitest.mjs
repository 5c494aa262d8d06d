// The Vitest example suite (examples/vitest) under @mate-guard/vitest.
import * as path from 'node:path';
import { execPath } from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const cwd = path.join(root, 'examples', 'vitest');
const mateVitest = path.join(root, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs');

const step = (title, args, expect) => ({
  title,
  command: execPath,
  args: [mateVitest, ...args],
  cwd,
  display: `(cd examples/vitest && mate-vitest ${args.join(' ')})`,
  env: { CI: 'true' },
  expect,
});

export const title = 'Vitest: @mate-guard/vitest on examples/vitest';
export const steps = [
  step('every planted bug is reported with its kind and its test; the run fails', ['run', '--guard-alloc'], {
    exit: 'nonzero',
    output: [
      '==mate-guard== ERROR: heap-buffer-overflow on WRITE',
      '==mate-guard== test: overflow.test.mjs > overflow > fillInclusive writes one byte past the end',
      'was killed by a guard fault: heap-buffer-overflow on allocation',
      '==mate-guard== ERROR: canary-corruption: 1 byte before the start',
      '==mate-guard== test: underflow.test.mjs > underflow > reverseFill writes one byte before the start',
      '==mate-guard== ERROR: canary-corruption: 2 bytes past the end',
      '==mate-guard== test: alignment-gap.test.mjs > alignment gap > writeAt(buf, length + 1) damages the gap canary',
      '==mate-guard== ERROR: heap-use-after-free on WRITE',
      '==mate-guard== test: use-after-free.test.mjs > use-after-free > touchRetained writes through a pointer to a collected buffer',
      '4 violations, 2 processes died, 3 tests skipped by tag',
    ],
  }),
  step(
    'head mode: the underflow faults at the first bad byte',
    ['run', 'underflow', '--guard-alloc', '--guard-mode', 'head'],
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: heap-buffer-underflow on WRITE',
        '1 byte before the start of allocation',
        'while running underflow.test.mjs > underflow > reverseFill writes one byte before the start',
      ],
    },
  ),
  step(
    'clean tests pass guarded (wasm trap included); tagged tests are skipped with the reason',
    ['run', 'clean', 'tagged', '--guard-alloc'],
    {
      exit: 0,
      output: [
        'tagged.test.mjs > measures raw allocation speed: guard allocator debug mode does not support this test',
        'tagged.test.mjs > CUDA graphs > captures a graph: guard allocator debug mode does not support graph capture',
        '0 violations, 3 tests skipped by tag',
      ],
      notOutput: ['==mate-guard=='],
    },
  ),
  step('guarding off (the default): tagged tests run', ['run', 'clean', 'tagged'], {
    exit: 0,
    output: ['5 passed'],
    notOutput: ['[mate-guard]', 'skipped'],
  }),
];
