// The planted bugs as plain scripts under `mate guard-run`.
import { execPath } from 'node:process';

const mate = 'packages/core-native/bin/mate.js';
const step = (title, flags, nodeArgs, script, expect) => {
  const [file, ...scriptArgs] = script.split(' ');
  return {
    title,
    command: execPath,
    args: [mate, 'guard-run', ...flags, '--', execPath, ...nodeArgs, `examples/scripts/${file}`, ...scriptArgs],
    display: `mate guard-run ${[...flags.map((f) => (f.includes('*') ? `'${f}'` : f)), '--', 'node', ...nodeArgs, `examples/scripts/${script}`].join(' ')}`,
    expect,
  };
};
const NATIVE = ['--native', '*buggy_addon.node'];

export const title = 'mate guard-run: plain scripts';
export const steps = [
  step(
    'overflow by one faults at the first bad byte; the access block names the line in the addon',
    [],
    [],
    'overflow.js',
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: heap-buffer-overflow on WRITE',
        '1 byte past the end of allocation',
        '==mate-guard== access:',
        '#0 FillInclusive examples/addon/src/buggy.cc:',
      ],
    },
  ),
  step('underflow by one faults in head mode', ['--mode', 'head'], [], 'underflow.js', {
    exit: 'nonzero',
    output: ['==mate-guard== ERROR: heap-buffer-underflow on WRITE', '1 byte before the start of allocation'],
  }),
  step(
    'underflow by one in tail mode: canary damage before the start, then the rerun in head mode faults at the write',
    [],
    [],
    'underflow.js',
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: canary-corruption: 1 byte before the start',
        '[mate-guard] rerun in head mode:',
        'faults at the first bad access',
        '==mate-guard== ERROR: heap-buffer-underflow on WRITE',
        '#0 ReverseFill examples/addon/src/buggy.cc:',
      ],
    },
  ),
  step(
    'overflow inside the alignment gap: canary damage, then the rerun with alignment 1 faults at the write',
    [],
    [],
    'gap-overflow.js',
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: canary-corruption: 2 bytes past the end',
        '[mate-guard] rerun in tail mode with alignment 1:',
        '#0 WriteAt examples/addon/src/buggy.cc:',
      ],
    },
  ),
  step('use-after-free through a retained pointer faults', [], ['--expose-gc'], 'use-after-free.js', {
    exit: 'nonzero',
    output: ['==mate-guard== ERROR: heap-use-after-free on WRITE', 'freed by the garbage collector'],
  }),
  step(
    'native heap: one byte past a std::vector the addon allocated faults',
    NATIVE,
    [],
    'native-heap.js vectorOverflow',
    {
      exit: 'nonzero',
      output: ['==mate-guard== ERROR: heap-buffer-overflow on WRITE', 'backend native-heap', '(buggy_addon.node+0x'],
    },
  ),
  step('native heap: a double free is reported with both frees and ignored', NATIVE, [], 'native-heap.js doubleFree', {
    exit: 'nonzero',
    output: ['==mate-guard== ERROR: double-free of', 'first freed at:', 'doubleFree: returned'],
  }),
  step(
    "native heap sampled 1 in 1,000,000: each call site's first 8 calls are still guarded, so the double free is caught",
    [...NATIVE, '--native-sample-rate', '1000000'],
    [],
    'native-heap.js doubleFree',
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: double-free of',
        'doubleFree: returned',
        '[mate-guard] native heap: ',
        ' call sites, all ',
      ],
    },
  ),
  step('clean script (with a WebAssembly trap) passes with no report', [], [], 'clean.js', {
    exit: 0,
    output: ['wasm trap ok'],
    notOutput: ['==mate-guard=='],
  }),
];
