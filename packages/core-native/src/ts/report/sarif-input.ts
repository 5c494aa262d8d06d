// What only Node can tell the native SARIF formatter
// (src/native/report/format/format_sarif.cc) about each violation: where in
// the repository its stacks and sites are (source maps, the checkout's
// root), file: URIs of files outside it, its fingerprint; and the tool's
// version and the checkout's URI. The log itself is the formatter's.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

import { loadNative } from '../install/native';
import type { UnreadableFile } from '../run/report-dir';
import type { ViolationEvent } from './event';
import { fingerprint } from './fingerprint';
import { formatOptions } from './format';
import { reportText } from './render';
import { eventSites, type SourceFrame } from './sites';
import type { RunPlace, SourcePaths } from './source-paths';

let version: string | undefined;
function toolVersion(): string {
  version ??= (JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}

/** A frame's file outside the repository, absolute: its file: URI (Node's encoding of one). */
const withFileUri = (f: SourceFrame) => (f.file && !f.repoPath && path.isAbsolute(f.file) ? { ...f, fileUri: pathToFileURL(f.file).href } : f);

export interface SarifInput {
  /** Each violation once, with where its run ran (undefined: a run that did not record it). */
  events: ReadonlyArray<{ event: ViolationEvent; run?: RunPlace }>;
  unreadable: readonly UnreadableFile[];
  paths: SourcePaths;
}

/** The SARIF log (one run of mate-guard) as JSON text. */
export function sarifText({ events, unreadable, paths }: SarifInput): string {
  const results = events.map(({ event, run }) => {
    // First: renders (and symbolizes) an event its process left unrendered; the sites read the symbolized frames.
    const text = reportText(event);
    const sites = eventSites(event, paths, run);
    return {
      event: { ...event, text },
      fingerprint: fingerprint(event, sites),
      sites: { ...sites, stacks: sites.stacks.map((s) => ({ label: s.label, frames: s.frames.map(withFileUri) })) },
    };
  });
  const input = {
    toolVersion: toolVersion(),
    srcroot: pathToFileURL(paths.here + path.sep).href,
    unreadable: unreadable.map((u) => ({ holds: u.holds, why: u.why, uri: pathToFileURL(u.file).href })),
    results,
  };
  return loadNative().sarifLog(JSON.stringify(input), formatOptions());
}
