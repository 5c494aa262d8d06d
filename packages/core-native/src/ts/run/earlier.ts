// Reports a process handed to its test runner (a failed test's message)
// shortly before a guard fault killed it: the runner dies with it (Jest in
// band, Mocha serial) or never got the results (Jest and Mocha workers send
// them when a file ends; Vitest batches its workers' task updates, so a
// test failed just before a crash may arrive as never run or passed), so
// nobody shows them unless we do.
import * as path from 'node:path';

import { loadNative } from '../install/native';
import type { ViolationEvent } from '../report/event';
import { reportText } from '../report/render';
import { readReportDir } from './report-dir';

/**
 * The caller-delivered reports of `crash`'s process, among `events`, less
 * those `shown` (event file names) the runner showed with their tests'
 * results (markReportsShown: a Jest file that ended before the crash).
 */
export function earlierReports(
  events: readonly ViolationEvent[],
  crash: ViolationEvent,
  shown: readonly string[] = [],
): ViolationEvent[] {
  return events.filter(
    (v) =>
      v.pid === crash.pid &&
      !v.fatal &&
      v.delivered === 'caller' &&
      !(v.file !== undefined && shown.includes(path.basename(v.file))),
  );
}

/** Text for the caller-delivered reports of `crash`'s process ('' when none). `who` names it. */
export function earlierReportsText(dir: string, crash: ViolationEvent, who: string): string {
  const report = readReportDir(dir);
  // Its runner showed the results before it died (a death at exit): they were shown.
  if (report.resultsShown.includes(crash.pid)) return '';
  const earlier = earlierReports(report.violations, crash, report.shownReports);
  if (!earlier.length) return '';
  // Its header line is the crash printer's own (report/format/earlier_header.cc).
  return (
    loadNative().earlierReportsHeader(JSON.stringify(crash), earlier.length, who) + earlier.map(reportText).join('')
  );
}
