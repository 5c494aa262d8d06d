// JS allocation stacks for reports. Capturing and formatting a stack costs
// far more than the allocation itself, so it happens once per distinct
// stack: the native side keys the caller's stack from V8's raw frame
// addresses (no strings, no source positions) and remembers which text each
// key has; only a stack not seen before is captured here, starting at the
// public function the user called (V8 skips our own frames for free), through
// the realm's Error.prepareStackTrace (runners' source-map formatters), and
// crosses into native code once.
import type { NativeBinding, NativeCaptureResult } from './native';

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
export type StackedAlloc = (size: number, entry?: EntryPoint, oneByte?: boolean) => ArrayBuffer;

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

/** Node's own formatter marks each async frame so ("at async Promise.all (index 0)" too); `async (` is a function named async. */
const ASYNC_FRAME = /^ {4}at async (?!\()/;
/** Node's own formatter (Node 20 installs it as Error.prepareStackTrace), as found when this module loaded. */
const NODE_FORMATTER = Error.prepareStackTrace?.name === 'ErrorPrepareStackTrace' ? Error.prepareStackTrace : undefined;

/**
 * The sync lines and the async tail of a stack text, when the tail is
 * complete (the awaiting chain ended before the frame limit) and the
 * formatter is Node's own (a runner's may format frames differently);
 * else undefined.
 */
function splitAsyncTail(stack: string): [string, string, number, number] | undefined {
  const formatter = Error.prepareStackTrace;
  if (formatter !== undefined && formatter !== NODE_FORMATTER) return undefined;
  const lines = stack.split('\n');
  const first = lines.findIndex((l) => ASYNC_FRAME.test(l));
  if (first <= 0 || lines.length >= FRAMES) return undefined;
  for (let i = first; i < lines.length; i++) if (!ASYNC_FRAME.test(lines[i])) return undefined;
  return [lines.slice(0, first).join('\n'), lines.slice(first).join('\n'), first, lines.length - first];
}

/** A capture that also gives the text it interned (native code splits off an async tail). */
type TextCapture = StackCapture & { withText(entry: EntryPoint): { id: number; stack: string } };

function makeStackCapture(native: NativeBinding): TextCapture {
  const ids = new Map<string, number>();
  let busy = false;
  function withText(entry: EntryPoint): { id: number; stack: string } {
    // An allocation made while we format a stack (a runner's source-map
    // formatter allocating) gets none: formatting must not re-enter.
    if (busy) return { id: 0, stack: '' };
    busy = true;
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = FRAMES;
    let text: string;
    try {
      text = stackText(entry);
    } finally {
      Error.stackTraceLimit = limit;
      busy = false;
    }
    const start = text.indexOf('\n') + 1; // past the "Error" line
    if (start <= 0) return { id: 0, stack: '' };
    const stack = text.slice(start);
    let id = ids.get(stack);
    if (id === undefined) {
      if (ids.size >= CACHE_LIMIT) ids.clear();
      id = native.internString(stack);
      ids.set(stack, id);
    }
    return { id, stack };
  }
  // Called from JS, the stack starts at capture's caller.
  const capture = (entry?: EntryPoint): number => withText(entry ?? capture).id;
  return Object.assign(capture, { withText });
}

/** One thread's stack texts: the capture and the check that its keys still hold. */
export interface JsStacks {
  capture: TextCapture;
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
export function makeNativeStackCapture(
  native: NativeBinding,
  { capture, keepKeysFresh }: JsStacks,
): () => NativeCaptureResult {
  const fromNative = (): NativeCaptureResult => {
    keepKeysFresh();
    const { id, stack } = capture.withText(fromNative);
    const parts = id === 0 ? undefined : splitAsyncTail(stack);
    if (parts === undefined) return id;
    return [id, native.internString(parts[0]), native.internString(parts[1]), parts[2], parts[3], FRAMES];
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
    return function alloc(size, entry, oneByte) {
      return native.alloc(size, capture(entry ?? alloc), undefined, oneByte === true);
    };
  }
  return function alloc(size, entry, oneByte) {
    keepKeysFresh();
    const made = native.allocKeyed(size, oneByte === true);
    if (typeof made !== 'number') return made;
    return native.alloc(size, capture(entry ?? alloc), made, oneByte === true);
  };
}
