// Reports a process handed to its test runner (a failed test's message)
// shortly before a guard fault killed it: the runner dies with it (Jest in
// band, Mocha serial) or never got the results of the file (Jest and Mocha
// workers send them when a file ends), so nobody shows them unless we do.
import type { ViolationEvent } from '../report/event';
import { reportText } from '../report/render';
import { readReportDir } from './report-dir';

/** Text for the caller-delivered reports of `crash`'s process ('' when none). `who` names it. */
export function earlierReportsText(dir: string, crash: ViolationEvent, who: string): string {
  const earlier = readReportDir(dir).violations.filter((v) => v.pid === crash.pid && !v.fatal && v.delivered === 'caller');
  if (!earlier.length) return '';
  const what = earlier.length === 1 ? 'a report' : `${earlier.length} reports`;
  return `[mate-guard] ${who} gave its test runner ${what} before the guard fault killed it; the runner never showed ${earlier.length === 1 ? 'it' : 'them'}:\n` +
    earlier.map(reportText).join('');
}
