// The report printer: a process a guard fault is killing writes its event
// and starts `node print-report.js <event file>` (crash/printer.cc), which
// renders the report, writes the text back into the event and prints it on
// the dying process's stderr (inherited). Exit 0 only when it printed.
import { renderEvent } from '../report/render';
import { readEventFile, rewriteEventFile } from '../report/files';

function main(file: string | undefined): number {
  const event = file ? readEventFile(file) : undefined;
  if (!file || !event) return 1;
  event.text = renderEvent(event);
  event.delivered = 'stderr';
  rewriteEventFile(file, event);
  process.stderr.write(event.text);
  return 0;
}

process.exitCode = main(process.argv[2]);
