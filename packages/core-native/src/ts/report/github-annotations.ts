// GitHub Actions workflow annotations: `::error file=...,line=...::report`
// lines a workflow's log turns into annotations drawn at the line on the
// pull request's diff. One per violation, at its access site (JS-only
// stacks: the test's file); a report file that could not be read gets one
// without a place.
import type { UnreadableFile } from '../run/report-dir';
import type { ViolationEvent } from './event';
import { isNotice } from './notices';
import { plainReportLines } from './plain-report';
import { eventSites } from './sites';
import type { RunPlace, SourcePaths } from './source-paths';

// The workflow-command encoding: the message escapes %, CR and LF; a property also `:` and `,`.
const escapeData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escapeProperty = (s: string) => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

function command(properties: Record<string, string | number | undefined>, message: string, level: 'error' | 'notice' = 'error'): string {
  const props = Object.entries(properties).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${escapeProperty(String(v))}`);
  return `::${level} ${props.join(',')}::${escapeData(message)}\n`;
}

/** The annotation of one violation: the whole report as its message, the headline as its title. */
export function annotation(e: ViolationEvent, paths: SourcePaths, run?: RunPlace): string {
  const lines = plainReportLines(e);
  const at = eventSites(e, paths, run).primary;
  const title = `mate-guard: ${(lines[0] ?? e.kind).replace(/^ERROR: /, '')}`;
  // An out-of-memory is the program's failure, not a memory bug: a notice.
  return command({ file: at?.path, line: at?.line, col: at?.column, title }, lines.join('\n'), isNotice(e) ? 'notice' : 'error');
}

export function unreadableAnnotation(u: UnreadableFile): string {
  return u.holds === 'report'
    ? command({ title: 'mate-guard: a report file could not be read' }, `cannot read report file ${u.file}: ${u.why}; counted as a violation that could not be read`)
    : '';
}
