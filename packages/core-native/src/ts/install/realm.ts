// Routes a realm's JS buffer constructors to guarded memory. Each patch is
// recorded so the realm can be restored exactly (Jest reuses a worker's
// Buffer across test files).
import { types } from 'node:util';

import type { EntryPoint } from './stack';

/**
 * Allocates guarded memory. `entry` is the public function the user called
 * (Buffer.alloc, a constructor trap): the allocation stack starts below it.
 * `oneByte`: its elements are bytes (Buffer, Uint8Array): exactPlacement
 * puts its last byte against the guard page.
 */
export type GuardedAlloc = (size: number, entry?: EntryPoint, oneByte?: boolean) => ArrayBuffer;

/** Allocations that could not be guarded and went to the engine as before. */
export interface PassThroughCounts {
  resizable: number;
  shared: number;
  subclass: number;
  tooLarge: number;
}

export const passThrough: PassThroughCounts = { resizable: 0, shared: 0, subclass: 0, tooLarge: 0 };

// Larger requests keep the engine's own checks and errors.
const MAX_GUARDED = 2 ** 32;

const TYPED_ARRAY_NAMES = [
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
] as const;

type Ctor = abstract new (...args: never[]) => object;

/** Truncated length per ToIndex, or undefined when the engine must throw. */
function toLength(value: unknown): number | undefined {
  if (value === undefined) return 0;
  if (typeof value !== 'number') return undefined; // let the engine coerce or throw
  const n = Number.isNaN(value) ? 0 : Math.trunc(value);
  return n >= 0 && n <= Number.MAX_SAFE_INTEGER ? n : undefined;
}

class Patcher {
  private readonly undo: Array<() => void> = [];

  set(target: object, key: PropertyKey, value: unknown): void {
    const before = Object.getOwnPropertyDescriptor(target, key);
    Object.defineProperty(target, key, {
      value,
      writable: before?.writable ?? true,
      enumerable: before?.enumerable ?? false,
      configurable: true,
    });
    this.undo.push(() => {
      if (before) Object.defineProperty(target, key, before);
      else delete (target as Record<PropertyKey, unknown>)[key];
    });
  }

  restore(): void {
    while (this.undo.length) this.undo.pop()!();
  }
}

// Buffer is shared by every realm of a process (Jest hands the worker's own
// Buffer to each test file): patched once, restored when the last realm goes.
let bufferPatch: { patcher: Patcher; users: number } | undefined;

function patchBuffer(alloc: GuardedAlloc): void {
  if (bufferPatch) {
    bufferPatch.users++;
    return;
  }
  const patcher = new Patcher();
  const orig = {
    alloc: Buffer.alloc,
    allocUnsafe: Buffer.allocUnsafe,
    allocUnsafeSlow: Buffer.allocUnsafeSlow,
    from: Buffer.from,
    concat: Buffer.concat,
  };
  const guarded = (n: number, entry: EntryPoint): Buffer => orig.from(alloc(n, entry, true), 0, n);
  const copy = (src: Buffer, entry: EntryPoint): Buffer => {
    const out = guarded(src.length, entry);
    src.copy(out);
    return out;
  };
  const fns: Record<keyof typeof orig, EntryPoint> = {
    alloc: function alloc(size: number, fill?: string | Buffer | number, encoding?: BufferEncoding) {
      const n = toLength(size);
      if (n === undefined || typeof size !== 'number' || n > MAX_GUARDED) return orig.alloc(size, fill, encoding);
      const buf = guarded(n, fns.alloc);
      if (fill !== undefined && fill !== 0 && n > 0) (buf.fill as (...a: unknown[]) => Buffer)(fill, encoding);
      return buf;
    } as EntryPoint,
    allocUnsafe: function allocUnsafe(size: number) {
      const n = toLength(size);
      if (n === undefined || typeof size !== 'number' || n > MAX_GUARDED) return orig.allocUnsafe(size);
      return guarded(n, fns.allocUnsafe);
    } as EntryPoint,
    allocUnsafeSlow: function allocUnsafeSlow(size: number) {
      const n = toLength(size);
      if (n === undefined || typeof size !== 'number' || n > MAX_GUARDED) return orig.allocUnsafeSlow(size);
      return guarded(n, fns.allocUnsafeSlow);
    } as EntryPoint,
    from: function from(value: unknown, encodingOrOffset?: unknown, length?: unknown) {
      const made = (orig.from as (...a: unknown[]) => Buffer)(value, encodingOrOffset, length);
      // Views over an existing ArrayBuffer stay views; every copying form
      // is copied once more, into guarded memory.
      const prim =
        value !== null && typeof value === 'object' ? (value as { valueOf?: () => unknown }).valueOf?.() : undefined;
      if (types.isAnyArrayBuffer(value) || types.isAnyArrayBuffer(prim)) return made;
      return copy(made, fns.from);
    } as EntryPoint,
    concat: function concat(list: readonly Uint8Array[], totalLength?: number) {
      return copy(orig.concat(list, totalLength), fns.concat);
    } as EntryPoint,
  };
  for (const key of Object.keys(fns) as Array<keyof typeof orig>) patcher.set(Buffer, key, fns[key]);
  bufferPatch = { patcher, users: 1 };
}

function unpatchBuffer(): void {
  if (!bufferPatch || --bufferPatch.users > 0) return;
  bufferPatch.patcher.restore();
  bufferPatch = undefined;
}

type Realm = Record<string, unknown>;

/**
 * Patches `realm` (globalThis, or a vm context's global as in Jest) so that
 * Buffer.alloc & co., `new ArrayBuffer(n)` and typed-array constructors
 * given a length or a source to copy return guarded memory. Returns the
 * function that undoes it.
 */
export function patchRealm(realm: typeof globalThis, alloc: GuardedAlloc): () => void {
  const g = realm as unknown as Realm;
  const patcher = new Patcher();
  const RealmArrayBuffer = g.ArrayBuffer as ArrayBufferConstructor;
  const foreign = RealmArrayBuffer.prototype !== ArrayBuffer.prototype;
  // Memory comes from the main realm; a vm context (Jest) sees it as its own.
  const allocHere: GuardedAlloc = foreign
    ? (n, entry, oneByte) => Object.setPrototypeOf(alloc(n, entry, oneByte), RealmArrayBuffer.prototype) as ArrayBuffer
    : alloc;

  const abHandler: ProxyHandler<ArrayBufferConstructor> = {
    construct(target, args: unknown[], newTarget) {
      if (newTarget !== abProxy) {
        passThrough.subclass++;
        return Reflect.construct(target, args, newTarget) as object;
      }
      const opts = args[1] as { maxByteLength?: unknown } | undefined;
      if (opts !== null && typeof opts === 'object' && opts.maxByteLength !== undefined) {
        passThrough.resizable++;
        return Reflect.construct(target, args) as object;
      }
      const n = toLength(args[0]);
      if (n === undefined || n > MAX_GUARDED) {
        if (n !== undefined) passThrough.tooLarge++;
        return Reflect.construct(target, args) as object;
      }
      return allocHere(n, abHandler.construct);
    },
  };
  const abProxy: ArrayBufferConstructor = new Proxy(RealmArrayBuffer, abHandler);
  patcher.set(g, 'ArrayBuffer', abProxy);
  patcher.set(RealmArrayBuffer.prototype, 'constructor', abProxy);

  const RealmShared = g.SharedArrayBuffer as SharedArrayBufferConstructor | undefined;
  if (RealmShared) {
    const sabProxy: SharedArrayBufferConstructor = new Proxy(RealmShared, {
      construct(target, args: unknown[], newTarget): object {
        passThrough.shared++;
        return Reflect.construct(target, args, newTarget === sabProxy ? target : newTarget) as object;
      },
    });
    patcher.set(g, 'SharedArrayBuffer', sabProxy);
    patcher.set(RealmShared.prototype, 'constructor', sabProxy);
  }

  for (const name of TYPED_ARRAY_NAMES) {
    const Target = g[name] as (Ctor & { BYTES_PER_ELEMENT: number; prototype: object }) | undefined;
    if (!Target) continue;
    const bpe = Target.BYTES_PER_ELEMENT;
    const handler: ProxyHandler<typeof Target> = {
      construct(target, args: unknown[], newTarget) {
        if (newTarget !== proxy) {
          passThrough.subclass++;
          return Reflect.construct(target, args, newTarget) as object;
        }
        const first = args[0];
        if (first === null || typeof first !== 'object') {
          const n = toLength(first);
          if (n === undefined || n * bpe > MAX_GUARDED) return Reflect.construct(target, args) as object;
          return Reflect.construct(target, [allocHere(n * bpe, handler.construct, bpe === 1)]) as object;
        }
        if (types.isAnyArrayBuffer(first)) return Reflect.construct(target, args) as object; // a view
        // A source to copy (typed array, array-like, iterable): the engine
        // converts it, then the values move into guarded memory.
        const made = Reflect.construct(target, args) as { byteLength: number; length: number };
        if (made.byteLength > MAX_GUARDED) return made;
        const out = Reflect.construct(target, [allocHere(made.byteLength, handler.construct, bpe === 1)]) as {
          set(src: unknown): void;
        };
        out.set(made);
        return out;
      },
    };
    const proxy: Ctor = new Proxy(Target, handler);
    patcher.set(g, name, proxy);
    patcher.set(Target.prototype, 'constructor', proxy);
  }

  if (g.Buffer === Buffer) patchBuffer(alloc);
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    patcher.restore();
    if (g.Buffer === Buffer) unpatchBuffer();
  };
}
