// Event files: `<reportDir>/mate-guard-<pid>-<n>.json`, one violation each,
// written whole (beside, then renamed) so readers never see half a file.
// The signal handler writes its own (report/report_file.cc) with the same
// naming; these are for violations found in-process.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { loadNative } from '../install/native';
import { parseEvent, type ViolationEvent } from './event';
import { eventShapeWhy, jsonDepth, MAX_EVENT_BYTES, MAX_EVENT_DEPTH } from './event-shape';
import { unreadableWhy } from './unreadable';
import { writeWholeFile } from '../run/private-files';

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

// Never through a link, never over a file someone else put there (run/private-files.ts).
const writeWhole = writeWholeFile;

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

/** What a file that is not a plain one is, in a word (for the line that names it). */
function kindOf(st: fs.Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  if (st.isDirectory()) return 'a directory';
  return 'not a file';
}

/**
 * The text of a report file no bigger than `max` bytes, or why not (read
 * through one descriptor: the size checked is the size read). A folder
 * from elsewhere (a downloaded artifact) can hold anything: never through
 * a link, and only a regular file (O_NONBLOCK: opening a FIFO waits for no
 * writer; it is then refused).
 */
export function readCapped(file: string, max: number): string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP')
      throw new ShapeError("a symbolic link (a report folder's files are read as plain files, never through a link)");
    throw err;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new ShapeError(`${kindOf(st)}, not a regular file`);
    if (st.size > max) throw new ShapeError(`${st.size} bytes, more than any report (${max} at most)`);
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** A file whose content is not what it should be: the message names the field. */
export class ShapeError extends Error {}

/** JSON text checked for depth, parsed, then checked by `shapeWhy`; throws a ShapeError naming what is wrong. */
export function parseChecked<T>(text: string, shapeWhy: (v: unknown) => string | undefined): T {
  const depth = jsonDepth(text);
  if (depth > MAX_EVENT_DEPTH) throw new ShapeError(`nested more than ${MAX_EVENT_DEPTH} levels deep`);
  const value = parseEvent(text) as unknown;
  const why = shapeWhy(value);
  if (why) throw new ShapeError(why);
  return value as T;
}

/** The event filed in `file`, or why it cannot be read (the reader names the file and the field, and counts it). */
export function readEventFile(file: string): ViolationEvent | string {
  let text: string | undefined;
  try {
    text = readCapped(file, MAX_EVENT_BYTES);
    const event = parseChecked<ViolationEvent>(text, eventShapeWhy);
    // And the schema the native formatter relies on (every field it reads), checked by its own reader.
    const problem = loadNative().validateEvent(text);
    if (problem) return problem;
    return { ...event, file };
  } catch (err) {
    return err instanceof ShapeError ? err.message : unreadableWhy(err, text);
  }
}
