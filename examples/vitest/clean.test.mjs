// Correct code passes with guarding on, including a WebAssembly
// out-of-bounds trap (mate-guard leaves faults outside its slots alone).
import { createRequire } from 'node:module';
import { describe, expect, test } from 'vitest';

const addon = createRequire(import.meta.url)('../addon');

describe('clean', () => {
  test('sum reads every byte in bounds', () => {
    expect(addon.sum(Buffer.from([1, 2, 3, 4]))).toBe(10);
  });

  test('a WebAssembly out-of-bounds load still throws RuntimeError', () => {
    // (module (memory 1) (func (export "load") (param i32) (result i32) local.get 0 i32.load))
    const wasm = new Uint8Array([
      0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0, 5, 3, 1, 0, 1, 7, 8, 1, 4, 108, 111, 97,
      100, 0, 0, 10, 9, 1, 7, 0, 32, 0, 40, 2, 0, 11,
    ]);
    const instance = new WebAssembly.Instance(new WebAssembly.Module(wasm));
    expect(() => instance.exports.load(1 << 20)).toThrow(WebAssembly.RuntimeError);
  });
});
