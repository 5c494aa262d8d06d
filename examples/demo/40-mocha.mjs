// The planted bugs as a mocha suite (examples/mocha) under @mate-guard/mocha:
// plain `mocha --require @mate-guard/mocha --guard-alloc`, and mate-mocha.
import { execPath } from 'node:process';

import { nativeHeapStep } from '../demo-steps.mjs';

const mocha = 'node_modules/mocha/bin/mocha.js';
const mateMocha = 'packages/mocha-plugin/bin/mate-mocha.js';
const spec = (name) => `examples/mocha/${name}.spec.cjs`;
const plain = (title, args, expect) => ({
  title,
  command: execPath,
  args: [mocha, '--require', '@mate-guard/mocha', ...args],
  display: `mocha --require @mate-guard/mocha ${args.join(' ')}`,
  expect,
});
const mate = (title, args, expect) => ({
  title,
  command: execPath,
  args: [mateMocha, ...args],
  display: `mate-mocha ${args.join(' ')}`,
  expect,
});
const testLine = (file, ...titles) => `==mate-guard== test: ${spec(file)} > ${titles.join(' > ')}`;

export const title = 'mocha: @mate-guard/mocha and mate-mocha';
export const steps = [
  nativeHeapStep(mate, spec, testLine),
  plain(
    'overflow by one faults; the dying mocha prints the report with the test',
    ['--guard-alloc', spec('overflow')],
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: heap-buffer-overflow on WRITE',
        '1 byte past the end of allocation',
        testLine('overflow', 'overflow by one', 'fills a 64-byte buffer'),
      ],
    },
  ),
  plain('underflow by one in tail mode: canary damage fails the test', ['--guard-alloc', spec('underflow')], {
    exit: 'nonzero',
    output: [
      '1 failing',
      '==mate-guard== ERROR: canary-corruption: 1 byte before the start',
      testLine('underflow', 'underflow by one', 'reverse-fills a 64-byte buffer'),
      'rerun with --guard-mode head',
      '1 violation',
    ],
  }),
  mate(
    'underflow by one in head mode faults (mate-mocha takes --guard-mode head)',
    ['--guard-alloc', '--guard-mode', 'head', spec('underflow')],
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: heap-buffer-underflow on WRITE',
        testLine('underflow', 'underflow by one', 'reverse-fills a 64-byte buffer'),
        'mocha process',
        'was killed by a guard fault: heap-buffer-underflow',
      ],
    },
  ),
  plain('overflow into the alignment gap: canary damage fails the test', ['--guard-alloc', spec('gap-overflow')], {
    exit: 'nonzero',
    output: [
      '1 failing',
      '==mate-guard== ERROR: canary-corruption: 2 bytes past the end',
      testLine('gap-overflow', 'alignment-gap overflow', 'writes at index length + 1'),
    ],
  }),
  plain('use-after-free via a retained pointer faults', ['--guard-alloc', '--expose-gc', spec('use-after-free')], {
    exit: 'nonzero',
    output: [
      '==mate-guard== ERROR: heap-use-after-free on WRITE',
      'freed by the garbage collector',
      testLine('use-after-free', 'use-after-free via a retained pointer', 'touches a buffer after the GC freed it'),
    ],
  }),
  plain(
    '--parallel: a worker killed by the overflow is named (mocha alone exits 0 and says nothing)',
    ['--guard-alloc', '--parallel', spec('overflow'), spec('clean')],
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: heap-buffer-overflow on WRITE',
        'mocha worker',
        `was killed by a guard fault: heap-buffer-overflow on allocation`,
        `while running ${spec('overflow')} > overflow by one > fills a 64-byte buffer`,
      ],
    },
  ),
  plain(
    'clean and tagged tests guarded: pass, tags pending with the reason, summary',
    ['--guard-alloc', spec('clean'), spec('tagged')],
    {
      exit: 0,
      output: [
        '2 passing',
        '2 pending',
        'skipped by mate-guard: guard allocator debug mode does not support graph capture',
        'tagged guard_incompatible',
        '0 violations, 2 tests skipped by tag',
      ],
      notOutput: ['==mate-guard=='],
    },
  ),
  plain('the same tests unguarded: the tagged ones run', [spec('clean'), spec('tagged')], {
    exit: 0,
    output: ['4 passing'],
    notOutput: ['pending', '[mate-guard]'],
  }),
];
