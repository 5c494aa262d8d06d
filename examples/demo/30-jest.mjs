// The Jest example suite (examples/jest) under mate-jest.
import { execPath } from 'node:process';

const mateJest = 'packages/jest-env/bin/mate-jest.js';
const config = ['-c', 'examples/jest/jest.config.js'];
const step = (title, args, expect) => ({
  title,
  command: execPath,
  args: [mateJest, ...args.slice(0, -1), ...config, ...args.slice(-1)],
  display: `mate-jest ${[...args.slice(0, -1), ...config, ...args.slice(-1)].join(' ')}`,
  expect,
});
const t = (file, ...titles) => `==mate-guard== test: examples/jest/${file}.test.js > ${titles.join(' > ')}`;

export const title = 'mate-jest: the Jest example suite';
export const steps = [
  step(
    'every planted bug, with workers: each reported with its kind and test; the crashes are attributed',
    ['--guard-alloc', '-w', '2', '--workerIdleMemoryLimit=1GB', 'overflow|underflow|gap-overflow|use-after-free'],
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: heap-buffer-overflow on WRITE',
        t('overflow', 'fillInclusive', 'fills a 64-byte buffer'),
        '[mate-guard] Jest worker',
        '==mate-guard== ERROR: canary-corruption: 1 byte before the start',
        t('underflow', 'reverseFill', 'fills a 64-byte buffer backwards'),
        '==mate-guard== ERROR: canary-corruption: 2 bytes past the end',
        t('gap-overflow', 'writeAt', 'writes the last byte of a 13-byte record'),
        '==mate-guard== ERROR: heap-use-after-free on WRITE',
        t('use-after-free', 'retain', 'touches a buffer after it was collected'),
        'was killed by a guard fault: heap-use-after-free',
        '4 violations',
      ],
    },
  ),
  step(
    'overflow by one in band: Jest itself dies; mate-jest still names the test',
    ['--guard-alloc', '-i', 'overflow'],
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: heap-buffer-overflow on WRITE',
        t('overflow', 'fillInclusive', 'fills a 64-byte buffer'),
        'was killed by a guard fault: heap-buffer-overflow on allocation',
        'while running examples/jest/overflow.test.js > fillInclusive > fills a 64-byte buffer',
      ],
    },
  ),
  step(
    'underflow by one with --guard-mode head faults at the bad write',
    ['--guard-alloc', '--guard-mode', 'head', 'underflow'],
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: heap-buffer-underflow on WRITE',
        '(64 bytes, head mode)',
        t('underflow', 'reverseFill', 'fills a 64-byte buffer backwards'),
      ],
    },
  ),
  step(
    'clean and tagged tests under guard: pass, tagged ones skipped with the reason, no report',
    ['--guard-alloc', '--verbose', 'clean|tagged'],
    {
      exit: 0,
      output: [
        '○ skipped measures allocation speed [skipped: guard allocator debug mode does not support this test (tagged guard_incompatible)]',
        '○ skipped replays a captured graph [skipped: guard allocator debug mode does not support graph capture]',
        '0 violations, 4 tests skipped by tag',
      ],
      notOutput: ['==mate-guard=='],
    },
  ),
  step('the same tests unguarded: the tagged ones run and pass', ['--verbose', 'clean|tagged'], {
    exit: 0,
    output: ['✓ measures allocation speed', '✓ replays a captured graph', 'Tests:       9 passed, 9 total'],
    notOutput: ['[mate-guard]', '==mate-guard=='],
  }),
];
