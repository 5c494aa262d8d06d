// Correct code: passes with guarding on or off, with no report.
const addon = require('../addon');

describe('sum', () => {
  test('adds every byte', () => {
    expect(addon.sum(Buffer.from([1, 2, 3, 4]))).toBe(10);
  });

  test.each([1, 13, 4096])('reads back the last byte of %i bytes', (n) => {
    const buf = Buffer.alloc(n);
    addon.writeAt(buf, n - 1, 9);
    expect(addon.readAt(buf, n - 1)).toBe(9);
  });
});
