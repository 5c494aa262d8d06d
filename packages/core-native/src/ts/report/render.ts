// Rendering an event for a reader: native frames symbolized (once, kept in
// the event), then the one formatter. Used by the report printer, by
// in-process checks and by a run's owner for events nobody rendered.
import { symbolizeFramesSync } from '../symbolize';
import type { NativeStack, ViolationEvent } from './event';
import { formatReport } from './format';
import type { SuppressionVerdict } from './suppressions';

const symbolized = (stack: NativeStack): boolean => stack.frames.every((f) => f.source !== undefined);

/**
 * Symbolizes the event's native stacks in place (once, all in one
 * symbolizer run), within a time bound.
 */
export function symbolizeEvent(event: ViolationEvent): void {
  const a = event.allocation;
  const stacks = [event.accessStack, a?.allocFrames, a?.freeFrames].filter((s): s is NativeStack => !!s && !symbolized(s));
  if (!stacks.length) return;
  const all = symbolizeFramesSync(stacks.flatMap((s) => s.frames));
  let at = 0;
  for (const s of stacks) {
    s.frames = all.slice(at, at + s.frames.length);
    at += s.frames.length;
  }
}

/** An event's report: as its process rendered it, or rendered now (its printer could not run). */
export function reportText(e: ViolationEvent): string {
  return e.text ?? renderEvent(e);
}

/**
 * The event's report text, its native frames symbolized first. `suppress`
 * (a run's suppressions) sees the symbolized event and marks it before it
 * is formatted: a report ends with its suppression, or the line that would.
 */
export function renderEvent(event: ViolationEvent, suppress?: (e: ViolationEvent) => SuppressionVerdict | undefined): string {
  symbolizeEvent(event);
  if (suppress && !event.suppressed) {
    const verdict = suppress(event);
    if (verdict) event.suppressed = verdict;
  }
  return formatReport(event);
}
