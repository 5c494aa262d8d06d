// The report text of an event: rendered by the one formatter, in the
// native core (src/native/report/format/), as Python and a dying process
// render it. What only Node knows is passed in: which directories hold
// runner and mate-guard frames, and node's own executable.
import * as fs from 'node:fs';
import * as os from 'node:os';

import { loadNative } from '../install/native';
import type { ViolationEvent } from './event';
import { defaultDropDirs } from './js-stack';

/** `SIGABRT` for 6 (this platform's numbering, as the dying process's). */
export function signalName(n: number): string {
  const found = Object.entries(os.constants.signals).find(([, v]) => v === n);
  return found ? found[0] : `signal ${n}`;
}

let runtime: string | undefined;

/** What the formatter needs to know about this machine (its options, as Python and the crash printer fill them). */
export function formatOptions(): { cwd: string; dropDirs: string[]; runtime: string } {
  runtime ??= fs.realpathSync(process.execPath);
  return { cwd: process.cwd(), dropDirs: defaultDropDirs(), runtime };
}

/** The report of one event: every line starts with `==mate-guard== `. */
export function formatReport(e: ViolationEvent): string {
  return loadNative().formatReport(JSON.stringify(e), formatOptions());
}
