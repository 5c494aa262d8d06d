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

export type StackCapture = (entry?: EntryPoint) => number;

export function makeStackCapture(native: NativeBinding): StackCapture {
  const ids = new Map<string, number>();
    function capture(entry?: EntryPoint): number {
    const holder: { stack?: string } = {};
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = FRAMES;
    Error.captureStackTrace(holder, entry ?? capture);
    Error.stackTraceLimit = limit;
    const text = holder.stack ?? '';
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
