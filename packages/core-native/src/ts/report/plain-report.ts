// A report as CI formats carry it (a SARIF message, a GitHub annotation):
// the native formatter's lines without the `==mate-guard== ` prefix, and
// for canary damage what its rerun found. Node resolves what only it can
// (native frames symbolized, the repository place) before the formatter runs.
import { loadNative } from '../install/native';
import type { ViolationEvent } from './event';
import { formatOptions } from './format';
import { reportText } from './render';
import type { Site } from './sites';

/** The event with its report text (rendered, its native frames symbolized, when its process left it unrendered). */
const withText = (e: ViolationEvent): string => JSON.stringify({ ...e, text: reportText(e) });

/** The report's lines, unprefixed, and the rerun's finding for canary damage. */
export function plainReportLines(e: ViolationEvent): string[] {
  return loadNative().formatReport(withText(e), { ...formatOptions(), format: 'plain' }).split('\n').filter((l) => l !== '');
}

/** One GitHub Actions workflow command for the event, at `site` in the repository (escaped: one event, one command). */
export function githubAnnotation(e: ViolationEvent, site: Site | undefined): string {
  const at = site ? { path: site.path, line: site.line, column: site.column } : undefined;
  return loadNative().formatReport(withText(e), { ...formatOptions(), format: 'github', site: at });
}

/** The annotation of a report file that could not be read. */
export function githubUnreadable(file: string, why: string): string {
  return loadNative().githubUnreadable(file, why);
}
