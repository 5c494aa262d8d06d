// Jest 30 "soft deletes" (wraps in warning getters) every property of values
// set on a test global after environment setup, at teardown. The realm patch
// sets ArrayBuffer & co. there, and proxies forward to the real constructors,
// which the next file in the worker still uses: mark them protected the way
// jest-util does, so Jest leaves them alone. Inert on Jest 29.
const PROTECT = Symbol.for('$$jest-protect-from-deletion');

const PATCHED_GLOBALS = [
  'ArrayBuffer', 'SharedArrayBuffer', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array',
  'Uint16Array', 'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array',
] as const;

export function protectFromGlobalsCleanup(realm: object): void {
  for (const name of PATCHED_GLOBALS) {
    const value: unknown = (realm as Record<string, unknown>)[name];
    if (typeof value !== 'function' || Reflect.has(value, PROTECT)) continue;
    Reflect.defineProperty(value, PROTECT, { configurable: true, enumerable: false, writable: true, value: [] });
  }
}
