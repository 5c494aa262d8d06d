// `mate report --format sarif|github`: the merged runs' events handed to
// the native formatter (src/native/report/format/format_reports.cc), which
// resolves their sites, fingerprints and file URIs against the reader's
// repository, as `python -m mate_guard report` has it do. Node symbolizes
// the events' native frames first and renders an event its process left unrendered.

import { coreVersion } from '../core-version';
import { loadNative } from '../install/native';
import type { UnreadableFile } from '../run/report-dir';
import type { ViolationEvent } from './event';
import { formatOptions, withOrigin } from './format';
import { filedReportText, symbolizeEvent } from './render';
import type { RunPlace } from './source-paths';

export interface CiInput {
  /** Each violation once, with where its run ran (undefined: a run that did not record it). */
  events: ReadonlyArray<{ event: ViolationEvent; run?: RunPlace }>;
  unreadable: readonly UnreadableFile[];
}

/** The SARIF log (JSON text), or the GitHub annotations (one command a line). */
export function ciFormatText(format: 'sarif' | 'github', { events, unreadable }: CiInput): string {
  const input = {
    toolVersion: coreVersion(),
    events: events.map(({ event, run }) => {
      // The sites read symbolized frames, also of an event its process rendered.
      symbolizeEvent(event);
      return { event: { ...withOrigin(event), text: filedReportText(event) }, run: run ?? null };
    }),
    unreadable: unreadable.map((u) => ({ holds: u.holds, why: u.why, file: u.file })),
  };
  return loadNative().formatReports(JSON.stringify(input), format, formatOptions());
}
