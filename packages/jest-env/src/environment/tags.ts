// Tag helpers for test files: `guardIncompatible(test)('name', fn)`,
// `graphCapture(describe)(...)`, also on `.each`, `.only`, `.skip` and their
// results. They run inside the test file's realm; while the wrapped call runs
// (it registers tests synchronously) the tag sits on a stack on that realm's
// global, where the environment reads it at Jest's `add_test` event. Outside
// the guard environment they only call through, so tagged tests run as usual.
import { GRAPH_CAPTURE_TAG, GUARD_INCOMPATIBLE_TAG, type GuardTag } from '@mate-guard/core/internal';

/** Where the tags of the call in progress live on the test realm's global. */
const ACTIVE_TAGS_KEY: unique symbol = Symbol.for('mate-guard.jest.activeTags') as never;

type TagStackHolder = { [ACTIVE_TAGS_KEY]?: string[] };

/** The tags in force on `realm` right now (outermost first). */
export function activeTags(realm: object): readonly string[] {
  return (realm as TagStackHolder)[ACTIVE_TAGS_KEY] ?? [];
}

function withTag<R>(tag: GuardTag, call: () => R): R {
  const holder = globalThis as TagStackHolder;
  const stack = (holder[ACTIVE_TAGS_KEY] ??= []);
  stack.push(tag);
  try {
    return call();
  } finally {
    stack.pop();
  }
}

type Callable = (...args: unknown[]) => unknown;

function tagged<T extends object>(target: T, tag: GuardTag): T {
  return new Proxy(target, {
    apply(fn, thisArg, args: unknown[]) {
      const result = withTag(tag, () => Reflect.apply(fn as Callable, thisArg, args));
      // `test.each(table)` returns the function that registers: tag it too.
      return typeof result === 'function' ? tagged(result as Callable, tag) : result;
    },
    get(obj, key, receiver) {
      const value: unknown = Reflect.get(obj, key, receiver);
      const desc = Object.getOwnPropertyDescriptor(obj, key);
      if (desc && !desc.configurable && !desc.writable) return value; // proxy invariant
      return typeof value === 'function' ? tagged(value as Callable, tag) : value;
    },
  });
}

/**
 * Marks what `target` registers (a test, a describe block with everything in
 * it, or `.each` rows) as not working under mate-guard: skipped, with the
 * reason, while guarding is on.
 */
export function guardIncompatible<T extends object>(target: T): T {
  return tagged(target, GUARD_INCOMPATIBLE_TAG);
}

/** Marks tests that use CUDA graph capture, which guarding refuses. */
export function graphCapture<T extends object>(target: T): T {
  return tagged(target, GRAPH_CAPTURE_TAG);
}
