// Demo steps that read the same under every runner that has them
// (examples/demo/*.mjs): each runner's file gives its own command maker,
// test file path and `==mate-guard== test:` line.

/** The native heap example (examples/addon's malloc bugs) run by `run`: a double free fails its test, a malloc overflow faults at the addon's line. */
export function nativeHeapStep(run, path, testLine) {
  return run(
    "native heap (--guard-native): a double free fails its test, a malloc overflow faults at the addon's line",
    ['--guard-alloc', '--guard-native', '*buggy_addon.node', path('native-heap')],
    {
      exit: 'nonzero',
      output: [
        '==mate-guard== ERROR: double-free of 0x',
        testLine('native-heap', 'native heap', 'a double free is reported for this test, and ignored'),
        '==mate-guard== ERROR: heap-buffer-overflow on WRITE',
        testLine('native-heap', 'native heap', 'one byte past a malloc block faults at the write'),
        'backend native-heap',
        'MallocOverflow examples/addon/src/native_heap.cc:',
      ],
    },
  );
}
