// JS allocation stacks for reports. Capturing a stack is by far the dearest
// part of a guarded allocation (V8 walks and formats the frames), so the
// capture starts at the public function the user called (V8 skips our own
// frames for free), keeps few frames, and each distinct stack crosses into
// native code once.
import type { NativeBinding } from './native';

const FRAMES = 8;
const CACHE_LIMIT = 20000;

/** A function on the stack that the capture starts below. */
export type EntryPoint = (...args: never[]) => unknown;

type StackCapture = (entry?: EntryPoint) => number;

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

export function makeStackCapture(native: NativeBinding): StackCapture {
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
