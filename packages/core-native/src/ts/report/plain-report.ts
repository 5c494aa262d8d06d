// A report as CI formats carry it (a SARIF message, an annotation): its
// lines without the `==mate-guard== ` prefix, and for canary damage what
// its rerun found, which the run printed apart from the report.
import type { ViolationEvent } from './event';
import { formatReport } from './format';
import { reportText } from './render';

const unprefixed = (text: string) => text.split('\n').filter((l) => l !== '').map((l) => l.replace(/^==mate-guard== /, ''));

/** The report's lines (rendered, and its native frames symbolized, when its process left it unrendered). */
export function plainReportLines(e: ViolationEvent): string[] {
  const lines = unprefixed(reportText(e));
  const r = e.rerun;
  if (r) {
    const how = `the rerun in ${r.mode} mode, alignment ${r.alignment}`;
    const fault = r.fault ? unprefixed(formatReport(r.fault)) : [];
    const at = fault.findIndex((l) => l === 'access:');
    lines.push(r.fault
      ? `${how} faulted: ${fault[0].replace(/^ERROR: /, '')}${at >= 0 && fault[at + 1] ? `, at ${fault[at + 1].trim().replace(/^#0 /, '')}` : ''}`
      : `${how} did not fault`);
  }
  return lines;
}
