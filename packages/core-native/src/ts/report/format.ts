// The report text of an event: rendered by the one formatter, in the
// native core (src/native/report/format/), as Python and a dying process
// render it. What only the writing process knows (its executable, which
// directories hold runner and mate-guard frames) is in the event itself
// (report/event_origin.h), so any reader renders it the same.
import * as fs from 'node:fs';
import * as os from 'node:os';

import { loadNative } from '../install/native';
import type { ViolationEvent } from './event';
import { defaultDropDirs, machineryPackages } from './machinery';

/** `SIGABRT` for 6 (this platform's numbering, as the dying process's). */
export function signalName(n: number): string {
  const found = Object.entries(os.constants.signals).find(([, v]) => v === n);
  return found ? found[0] : `signal ${n}`;
}

let runtime: string | undefined;

/** What the formatter needs to know about the reader (its options, as Python and the crash printer fill them). */
export function formatOptions(): { cwd: string } {
  return { cwd: process.cwd() };
}

/**
 * The event with its writer's origin: one written before events recorded
 * it is read as this process's, as it was rendered then (node's executable,
 * mate-guard's and the runners' directories, and the packages this
 * process's runner adapters declare).
 */
export function withOrigin(e: ViolationEvent): ViolationEvent {
  if (e.runtime !== undefined && e.machineryDirs !== undefined && e.machineryPackages !== undefined) return e;
  runtime ??= fs.realpathSync(process.execPath);
  return {
    ...e,
    runtime: e.runtime === undefined ? runtime : e.runtime,
    machineryDirs: e.machineryDirs ?? defaultDropDirs(),
    machineryPackages: e.machineryPackages ?? machineryPackages(),
  };
}

/** The report of one event: every line starts with `==mate-guard== `. */
export function formatReport(e: ViolationEvent): string {
  return loadNative().formatReport(JSON.stringify(withOrigin(e)), formatOptions());
}
