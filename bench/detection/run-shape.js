// Runs one bug shape of the detection benchmark (shapes.cc), as a test
// would call the binding: node run-shape.js <shape> (the addon's path in
// SHAPES_ADDON). Prints `done <shape>` when the process survived it.
'use strict';
const a = require(process.env.SHAPES_ADDON);

const shape = process.argv[2];

async function main() {
  switch (shape) {
    case 'utf8TruncatedLead':
      // "café name: " then a 3-byte lead byte with its continuation bytes cut off (13 bytes).
      a.utf8TruncatedLead(Buffer.from([0x63, 0x61, 0x66, 0xc3, 0xa9, 0x20, 0x6e, 0x61, 0x6d, 0x65, 0x3a, 0x20, 0xe2]));
      break;
    case 'cborLengthOverread':
      // A text string header claiming 40 bytes, 7 present.
      a.cborLengthOverread(Buffer.from([40, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67]));
      break;
    case 'sealOutputTooSmall':
      a.sealOutputTooSmall(Buffer.allocUnsafe(40).fill(1));
      break;
    case 'keptBufferPointer': {
      a.keepBufferPointer(Buffer.alloc(2000));
      // The Buffer is garbage now: collected, its memory freed.
      // (A Node-API finalizer runs a turn after the collection: a few rounds.)
      for (let i = 0; i < 10; i++) {
        global.gc();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      a.writeKeptPointer();
      break;
    }
    default:
      if (typeof a[shape] !== 'function') throw new Error(`unknown shape ${JSON.stringify(shape)}`);
      a[shape]();
  }
  console.log(`done ${shape}`);
}

// A rejection is the shape's failure: printed, and the exit status says so.
main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
