// The example suite: add the plugin, then turn guarding on with
// `mate-vitest run --guard-alloc`, `vitest run -- --guard-alloc` or
// MATE_VITEST_GUARD_ALLOC=1. Without one of those the tests run unguarded.
import guardAlloc from '@mate-guard/vitest';

export default {
  plugins: [guardAlloc()],
  test: {
    include: ['*.test.mjs'],
    // The use-after-free example drops a buffer and collects it on purpose.
    execArgv: ['--expose-gc'],
  },
};
