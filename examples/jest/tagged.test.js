// Tests that can't run under guarding: skipped (with the reason in the name)
// while mate-guard is on, run as usual when it is off.
// In your project: require('@mate-guard/jest-env').
const { guardIncompatible, graphCapture } = require('../../packages/jest-env');
const addon = require('../addon');

guardIncompatible(test)('measures allocation speed', () => {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 1000; i++) Buffer.alloc(16);
  expect(process.hrtime.bigint() > t0).toBe(true);
});

graphCapture(describe)('captured kernels', () => {
  test('replays a captured graph', () => {
    expect(addon.sum(Buffer.from([5]))).toBe(5);
  });
});

guardIncompatible(test.each([[1], [2]]))('row %i depends on allocator timing', (n) => {
  expect(n).toBeGreaterThan(0);
});

test('untagged tests always run', () => {
  expect(addon.sum(Buffer.alloc(3, 1))).toBe(3);
});
