// Event files: `<reportDir>/mate-guard-<pid>-<n>.json`, one violation each,
// written whole (beside, then renamed) so readers never see half a file.
// The signal handler writes its own (report/report_file.cc) with the same
// naming; these are for violations found in-process.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { loadNative } from '../install/native';
import { parseEvent, type ViolationEvent } from './event';
import { unreadableWhy } from './unreadable';

export const EVENT_FILE = /^mate-guard-\d+-\d+\.json$/;
/** An event being written (or whose writing never finished): renamed to its name once whole. */
export const UNFINISHED_EVENT_FILE = /^mate-guard-\d+-\d+\.json\.tmp$/;

let sequence = 0;

/** The event as filed: where it was read from is not part of it. */
export function eventBody(event: ViolationEvent): Omit<ViolationEvent, 'file'> {
  const body: Partial<ViolationEvent> = { ...event };
  delete body.file;
  return body as Omit<ViolationEvent, 'file'>;
}

function writeWhole(file: string, text: string): void {
  fs.writeFileSync(`${file}.tmp`, text);
  fs.renameSync(`${file}.tmp`, file);
}

/**
 * Files a new event; returns its path. The TS side numbers its files from
 * a high base so they never meet the signal handler's, which count from 1.
 */
export function writeEventFile(dir: string, event: ViolationEvent): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `mate-guard-${process.pid}-${1_000_000 + ++sequence}.json`);
  writeWhole(file, JSON.stringify(eventBody(event)) + '\n');
  return file;
}

/** Writes an event back to its file (the printer adds the rendered text). */
export function rewriteEventFile(file: string, event: ViolationEvent): void {
  writeWhole(file, JSON.stringify(eventBody(event)) + '\n');
}

/** The native reader's cap (report/format/json_value.h): no writer makes an event this big. */
const MAX_EVENT_BYTES = 16 * 1024 * 1024;

/** The event filed in `file`, or why it cannot be read (the reader names the file and counts it). */
export function readEventFile(file: string): ViolationEvent | string {
  let text: string | undefined;
  try {
    const size = fs.statSync(file).size;
    if (size > MAX_EVENT_BYTES) return `${size} bytes, more than the ${MAX_EVENT_BYTES} an event may have`;
    text = fs.readFileSync(file, 'utf8');
    const event = parseEvent(text);
    if (typeof event !== 'object' || event === null || event.tool !== 'mate-guard' || typeof event.kind !== 'string') return 'not a mate-guard report (no tool and kind)';
    // The schema the formatter relies on (types, nesting depth), checked by the native reader: the field is named.
    const problem = loadNative().validateEvent(text);
    if (problem) return problem;
    return { ...event, file };
  } catch (err) {
    return unreadableWhy(err, text);
  }
}
