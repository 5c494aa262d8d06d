// The report printer: a process a guard fault is killing writes its event
// and starts `node print-report.js <event file> [--with-earlier]`
// (report/printer.cc), which renders the report, writes the text back into
// the event and prints it on the dying process's stderr (inherited). With
// --with-earlier (no process outlives the dying one to do it) it first
// shows what that process reported earlier to its test runner, which dies
// with it before showing it. Exit 0 only when it printed.
import * as path from 'node:path';

import type { ViolationEvent } from '../report/event';
import { readEventFile, rewriteEventFile } from '../report/files';
import { renderEvent } from '../report/render';
import { loadSuppressions, matchSuppression } from '../report/suppressions';
import { earlierReportsText } from '../run/earlier';
import { readRunInfo } from '../run/report-dir';

/** The run's suppressions, named in its report directory (the printer gets no settings of its own). */
function runSuppressions(eventFile: string): ((e: ViolationEvent) => ReturnType<typeof matchSuppression>) | undefined {
  const file = readRunInfo(path.dirname(eventFile))?.suppressions;
  if (!file) return undefined;
  try {
    const rules = loadSuppressions(file);
    return (e) => matchSuppression(e, rules);
  } catch {
    return undefined; // the run checked it at start; its owner matches again at the end
  }
}

function main(file: string | undefined, withEarlier: boolean): number {
  const event = file ? readEventFile(file) : undefined;
  if (!file || event === undefined || typeof event === 'string') return 1;
  event.text = renderEvent(event, runSuppressions(file));
  event.delivered = 'stderr';
  rewriteEventFile(file, event);
  const earlier = withEarlier ? earlierReportsText(path.dirname(file), event, 'this process') : '';
  process.stderr.write(earlier + event.text + ownerGone(file, event));
  return 0;
}

/**
 * The dying process owns the run (a runner's main process: Vitest with
 * threads, Jest in band, Mocha serial, without a mate-* CLI around it):
 * nothing will print the summary; say where the reports stay.
 */
function ownerGone(file: string, event: ViolationEvent): string {
  if (!event.fatal) return '';
  const dir = path.dirname(file);
  if (readRunInfo(dir)?.pid !== event.pid) return '';
  return `[mate-guard] the process that owned this run dies with it, so no summary follows; the reports stay in ${dir} (mate report ${dir} sums them up)\n`;
}

process.exitCode = main(process.argv[2], process.argv[3] === '--with-earlier');
