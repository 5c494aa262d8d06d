'use strict';
// Tagged tests: pending while guarding is on (the reason is in the title),
// run normally otherwise.
const assert = require('node:assert');
const { guardIncompatible, graphCapture } = require('@mate-guard/mocha');

guardIncompatible(
  it('compares buffer addresses across calls', function () {
    assert.ok(Buffer.alloc(8).length === 8);
  }),
);

graphCapture(
  describe('CUDA graph capture', function () {
    it('captures and replays a graph', function () {
      assert.ok(true);
    });
  }),
);
