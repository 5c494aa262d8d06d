// JS allocation stacks for reports, without mate-guard's own frames.
import * as path from 'node:path';

const ownDir = __dirname + path.sep;
const FRAMES = 12;

export function captureStack(): string | undefined {
  const holder: { stack?: string } = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = FRAMES + 4;
  Error.captureStackTrace(holder, captureStack);
  Error.stackTraceLimit = limit;
  const lines = (holder.stack ?? '').split('\n');
  const kept: string[] = [];
  for (let i = 1; i < lines.length && kept.length < FRAMES; i++) {
    if (!lines[i].includes(ownDir)) kept.push(lines[i].trim());
  }
  return kept.length ? kept.join('\n') : undefined;
}
