// Tagged tests: skipped while guarding is on (node's own skip, with the
// reason), run normally otherwise.
import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { graphCapture, guardIncompatible } from '@mate-guard/node-test';

test('compares buffer addresses across calls', guardIncompatible(), () => {
  assert.equal(Buffer.alloc(8).length, 8);
});

describe('CUDA graph capture', graphCapture(), () => {
  it('captures and replays a graph', () => {
    assert.ok(true);
  });
});
