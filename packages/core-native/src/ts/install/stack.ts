// JS allocation stacks for reports. Capturing and formatting a stack costs
// far more than the allocation itself, so it happens once per distinct
// stack: the native side keys the caller's stack from V8's raw frame
// addresses (no strings, no source positions) and remembers which text each
// key has; only a stack not seen before is captured here, starting at the
// public function the user called (V8 skips our own frames for free), through
// the realm's Error.prepareStackTrace (runners' source-map formatters), and
// crosses into native code once.
import type { NativeBinding } from './native';

const FRAMES = 8;
// Frames of mate-guard's own allocation path, the entry point included, at
// most (Buffer.from -> copy -> guarded -> alloc closure): a key covers these
// plus the FRAMES a text shows, so it sees every frame the text can name.
const OWN_FRAMES = 4;
const CACHE_LIMIT = 20000;

/** A function on the stack that the capture starts below. */
export type EntryPoint = (...args: never[]) => unknown;

type StackCapture = (entry?: EntryPoint) => number;

/** Allocates `size` guarded bytes whose stack starts below `entry`. */
export type StackedAlloc = (size: number, entry?: EntryPoint) => ArrayBuffer;

/**
 * The stack below `entry`. The realm's Error.prepareStackTrace (a runner's
 * source-map formatter) is user code and can throw, e.g. when the
 * allocation happens while its own modules are still loading; a throw here
 * would escape from `new Uint8Array()`. Then Node's own formatting is used,
 * and failing that, no stack.
 */
function stackText(entry: EntryPoint): string {
  const holder: { stack?: unknown } = {};
  try {
    Error.captureStackTrace(holder, entry);
    if (typeof holder.stack === 'string') return holder.stack;
  } catch {
    // fall through to Node's formatter
  }
  const errorCtor = Error as { prepareStackTrace?: unknown };
  const custom = errorCtor.prepareStackTrace;
  try {
    errorCtor.prepareStackTrace = undefined;
    Error.captureStackTrace(holder, entry);
    return typeof holder.stack === 'string' ? holder.stack : '';
  } catch {
    return '';
  } finally {
    errorCtor.prepareStackTrace = custom;
  }
}

function makeStackCapture(native: NativeBinding): StackCapture {
  const ids = new Map<string, number>();
  let busy = false;
  function capture(entry?: EntryPoint): number {
    // An allocation made while we format a stack (a runner's source-map
    // formatter allocating) gets none: formatting must not re-enter.
    if (busy) return 0;
    busy = true;
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = FRAMES;
    let text: string;
    try {
      text = stackText(entry ?? capture);
    } finally {
      Error.stackTraceLimit = limit;
      busy = false;
    }
    const start = text.indexOf('\n') + 1; // past the "Error" line
    if (start <= 0) return 0;
    const stack = text.slice(start);
    let id = ids.get(stack);
    if (id === undefined) {
      if (ids.size >= CACHE_LIMIT) ids.clear();
      id = native.internString(stack);
      ids.set(stack, id);
    }
    return id;
  }
  return capture;
}

/** One thread's stack texts: the capture and the check that its keys still hold. */
export interface JsStacks {
  capture: StackCapture;
  /** Texts depend on the realm's formatter (Jest installs one per file): a new one makes the keys stale. */
  keepKeysFresh: () => void;
}

/** Shared by JS buffers and native code, so one formatter change resets the keys once. */
export function makeJsStacks(native: NativeBinding): JsStacks {
  let formatter = Error.prepareStackTrace;
  return {
    capture: makeStackCapture(native),
    keepKeysFresh() {
      if (Error.prepareStackTrace === formatter) return;
      formatter = Error.prepareStackTrace;
      native.resetStackKeys();
    },
  };
}

/**
 * The capture native code calls, on this thread, for what it does inside a
 * call from JS (an addon's malloc, a CUDA allocation or launch): the stack
 * starts at the JS caller of the addon's function. Native code asks only
 * for stacks its keys have not seen (binding/js_stack_capture.cc).
 */
export function makeNativeStackCapture({ capture, keepKeysFresh }: JsStacks): () => number {
  const fromNative = (): number => {
    keepKeysFresh();
    return capture(fromNative);
  };
  return fromNative;
}

/**
 * Guarded allocation with its stack: a known stack costs one native call;
 * a new one is captured as text once. Falls back to capturing every time
 * where the engine gives no raw stack samples.
 */
export function makeStackedAlloc(native: NativeBinding, { capture, keepKeysFresh }: JsStacks): StackedAlloc {
  if (!native.stackKeys(OWN_FRAMES + FRAMES)) {
    return function alloc(size, entry) {
      return native.alloc(size, capture(entry ?? alloc));
    };
  }
  return function alloc(size, entry) {
    keepKeysFresh();
    const made = native.allocKeyed(size);
    if (typeof made !== 'number') return made;
    return native.alloc(size, capture(entry ?? alloc), made);
  };
}
