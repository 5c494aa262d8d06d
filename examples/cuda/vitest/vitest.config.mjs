// The CUDA example suite for Vitest: `mate-vitest run --guard-device cuda`
// (or MATE_VITEST_GUARD_DEVICE=cuda). Each planted bug has a file of its
// own: a GPU fault leaves the CUDA context unusable for the rest of its
// process, and Vitest gives each file one.
import guardAlloc from '@mate-guard/vitest';

export default {
  plugins: [guardAlloc()],
  test: { include: ['*.test.mjs'] },
};
