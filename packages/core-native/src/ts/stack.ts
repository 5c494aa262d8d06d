// JS allocation stacks for reports, without mate-guard's own frames.
// Capturing a stack is by far the dearest part of a guarded allocation
// (V8 walks and formats the frames), so frames are few, the text is cut
// without splitting, and each distinct stack crosses into native code once.
import * as path from 'node:path';

import type { NativeBinding } from './native';

const ownDir = path.resolve(__dirname) + path.sep;
// Our own frames (2-4, innermost first) plus the user's.
const FRAMES = 12;
const CACHE_LIMIT = 20000;

export function makeStackCapture(native: NativeBinding): () => number {
  const ids = new Map<string, number>();
  function capture(): number {
    const holder: { stack?: string } = {};
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = FRAMES;
    Error.captureStackTrace(holder, capture);
    Error.stackTraceLimit = limit;
    const text = holder.stack ?? '';
    // Skip the "Error" line, then every leading frame of ours.
    let start = text.indexOf('\n') + 1;
    while (start > 0) {
      const end = text.indexOf('\n', start);
      const line = end < 0 ? text.slice(start) : text.slice(start, end);
      if (!line.includes(ownDir)) break;
      start = end < 0 ? 0 : end + 1;
    }
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
