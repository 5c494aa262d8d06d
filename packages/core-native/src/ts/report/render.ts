// Rendering an event for a reader: native frames symbolized (once, kept in
// the event), then the one formatter. Used by the report printer, by
// in-process checks and by a run's owner for events nobody rendered.
import * as path from 'node:path';

import { loadNative } from '../install/native';
import { nativeHeapOf } from '../install/native-heap';
import { demangleNamesSync, symbolizeFramesSync } from '../symbolize';
import type { DeviceLaunch, NativeStack, ViolationEvent } from './event';
import { formatOptions, formatReport, withOrigin } from './format';
import type { SuppressionVerdict } from './suppressions';

const symbolized = (stack: NativeStack): boolean => stack.frames.every((f) => f.source !== undefined);

/**
 * Symbolizes the event's native stacks in place (once, all in one
 * symbolizer run), within a time bound.
 */
export function symbolizeEvent(event: ViolationEvent): void {
  const a = event.allocation;
  const stacks = [event.accessStack, a?.allocFrames, a?.freeFrames].filter(
    (s): s is NativeStack => !!s && !symbolized(s),
  );
  if (!stacks.length) return;
  const all = symbolizeFramesSync(stacks.flatMap((s) => s.frames));
  let at = 0;
  for (const s of stacks) {
    s.frames = all.slice(at, at + s.frames.length);
    at += s.frames.length;
  }
}

/**
 * A demangled kernel's name without its return type and parameter list;
 * template arguments stay (`vectorized_elementwise_kernel<4,
 * at::native::FillFunctor<float>, ...>` says which kernel it is).
 */
function kernelDisplayName(demangled: string): string {
  let s = demangled.replace(/^void /, '');
  if (s.endsWith(')')) {
    let depth = 0;
    for (let i = s.length - 1; i >= 0; i--) {
      if (s[i] === ')') depth++;
      else if (s[i] === '(' && --depth === 0) {
        s = s.slice(0, i);
        break;
      }
    }
  }
  return s;
}

/** Device reports: C++ kernel names (PyTorch's templates) demangled, in place. */
function demangleKernels(event: ViolationEvent): void {
  const launches: DeviceLaunch[] = [
    ...(event.launches?.list ?? []),
    ...(event.streams?.useLaunch ? [event.streams.useLaunch] : []),
  ];
  const names = launches.map((l) => l.kernel).filter((k): k is string => !!k && k.startsWith('_Z'));
  if (!names.length) return;
  const demangled = demangleNamesSync(names);
  for (const l of launches) {
    const d = l.kernel ? demangled.get(l.kernel) : undefined;
    if (d) l.kernel = kernelDisplayName(d);
  }
}

/**
 * An event's report for a terminal: as its process rendered it, or rendered
 * now (its printer could not run). The filed text is the artifact's word (a
 * forged one can hold escape sequences): what a terminal would obey is
 * spelled out, as the formatter does for every field; newlines and tabs stay.
 */
export function reportText(e: ViolationEvent): string {
  return e.text != null ? loadNative().visibleLines(e.text) : renderEvent(e);
}

/** The same, as filed: for the formats that escape the whole text themselves (SARIF, GitHub annotations). */
export function filedReportText(e: ViolationEvent): string {
  return e.text ?? renderEvent(e);
}

/**
 * The event's report text, its native frames symbolized first. `suppress`
 * (a run's suppressions) sees the symbolized event and marks it before it
 * is formatted: a report ends with its suppression, or the line that would.
 */
export function renderEvent(
  event: ViolationEvent,
  suppress?: (e: ViolationEvent) => SuppressionVerdict | undefined,
): string {
  if (event.death && !event.nativeHeap && event.file) {
    const heap = nativeHeapOf(path.dirname(event.file), event.pid);
    if (heap) event.nativeHeap = heap;
  }
  prepareEvent(event);
  if (suppress && !event.suppressed) {
    const verdict = suppress(event);
    if (verdict) event.suppressed = verdict;
  }
  return formatReport(event);
}

/** What rendering an event needs done in Node first (the formatter reads no files): symbolized frames, demangled kernels. */
function prepareEvent(event: ViolationEvent): void {
  symbolizeEvent(event);
  demangleKernels(event);
}

/**
 * What the run's rerun found for `event` (its `rerun`), as the run's
 * terminal printed it under the report, by the one formatter
 * (report/format/rerun_block.h): `mate report` shows a kept folder's
 * reruns as the run's terminal did; '' when nothing. A fault or death filed without its text is prepared as
 * renderEvent prepares an event.
 */
export function rerunText(event: ViolationEvent): string {
  const r = event.rerun;
  if (!r || event.suppressed) return '';
  const ready = (e: Omit<ViolationEvent, 'file'> | null | undefined) => {
    if (!e || e.text != null) return e;
    // In place, as for any event rendered: a rerun's fault is filed with the frames its report showed.
    prepareEvent(e);
    return withOrigin(e);
  };
  const rerun = { ...r, fault: ready(r.fault) ?? null, ...(r.death ? { death: ready(r.death) } : {}) };
  return loadNative().formatRerun(JSON.stringify({ ...event, rerun }), formatOptions());
}
