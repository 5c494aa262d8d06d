'use strict';
// Correct code, including a WebAssembly out-of-bounds trap that must keep
// throwing WebAssembly.RuntimeError under mate-guard.
const addon = require('../addon');
const buf = Buffer.from([1, 2, 3, 4]);
if (addon.sum(buf) !== 10) throw new Error('sum is wrong');
// (module (memory 1) (func (export "load") (param i32) (result i32) local.get 0 i32.load))
const wasm = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0, 5, 3, 1, 0, 1, 7, 8, 1, 4, 108, 111, 97, 100, 0,
  0, 10, 9, 1, 7, 0, 32, 0, 40, 2, 0, 11,
]);
const instance = new WebAssembly.Instance(new WebAssembly.Module(wasm));
try {
  instance.exports.load(1 << 20);
  throw new Error('wasm out-of-bounds load did not trap');
} catch (err) {
  if (!(err instanceof WebAssembly.RuntimeError)) throw err;
  console.log(`clean: sum ok, wasm trap ok (${err.message})`);
}
