// Tests that can't run under guarding: skipped with a reason while it is on,
// run normally while it is off.
import { describe, expect, test } from 'vitest';
import { graphCapture, guardIncompatible } from '@mate-guard/vitest';

test('measures raw allocation speed', guardIncompatible(), () => {
  const start = process.hrtime.bigint();
  for (let i = 0; i < 1000; i++) Buffer.alloc(64);
  expect(process.hrtime.bigint() > start).toBe(true);
});

describe('CUDA graphs', graphCapture(), () => {
  test('captures a graph', () => {
    expect(true).toBe(true);
  });
});

test('the raw form works too', { tags: ['graph-capture'] }, () => {
  expect(true).toBe(true);
});
