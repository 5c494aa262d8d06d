// Report folders and files nobody else can plant or redirect. A process
// with no run to write into (installGuardAllocator alone, Jest with the
// environment but no reporter) gets a fresh folder of its own (mkdtemp)
// under a per-user parent, `<tmp>/mate-guard-<uid>/`, made 0700 and
// checked: a parent that is a link, another user's or open to others is
// refused (another user could have made it, with links named like the next
// file). Files are created with O_CREAT|O_EXCL|O_NOFOLLOW: never through a
// link, never over a file someone else put there.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { GuardConfigError } from '../errors';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
/** A new file, never through a link (O_NOFOLLOW is 0 where the OS has none). */
export const NEW_FILE = O_WRONLY | O_CREAT | O_EXCL | (O_NOFOLLOW ?? 0);

const uid = (): number => process.getuid?.() ?? -1;

/** `<tmp>/mate-guard-<uid>`: made 0700 when absent; throws, naming it, when it is not this user's own private folder. */
export function perUserParent(tmp = os.tmpdir()): string {
  const dir = path.join(tmp, `mate-guard-${uid()}`);
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const st = fs.lstatSync(dir);
  const fix = `remove it, or give a report directory (MATE_GUARD_REPORT_DIR)`;
  if (st.isSymbolicLink())
    throw new GuardConfigError(`mate-guard: ${dir} is a link, not the folder mate-guard made for your reports: ${fix}`);
  if (!st.isDirectory()) throw new GuardConfigError(`mate-guard: ${dir} is not a folder: ${fix}`);
  if (uid() >= 0 && st.uid !== uid())
    throw new GuardConfigError(`mate-guard: ${dir} belongs to user ${st.uid}, not you (${uid()}): ${fix}`);
  if ((st.mode & 0o077) !== 0)
    throw new GuardConfigError(
      `mate-guard: ${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)}; mate-guard makes it 0700): ${fix}`,
    );
  return dir;
}

let own: string | undefined;

/** This process's own report folder (made once, on first use): mkdtemp under perUserParent. */
export function ownReportDir(): string {
  own ??= fs.mkdtempSync(path.join(perUserParent(), `pid-${process.pid}-`));
  return own;
}

/** Whether `dir` is the folder ownReportDir made (this process removes it at exit when it holds no report). */
export const isOwnReportDir = (dir: string): boolean => own !== undefined && path.resolve(dir) === own;

/** Writes `text` to a new file `file`: fails if anything (a file, a link) is there. */
export function writeNewFile(file: string, text: string): void {
  const fd = fs.openSync(file, NEW_FILE, 0o644);
  try {
    fs.writeFileSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes `text` whole to `file` (beside it, then renamed, so readers never
 * see half a file). A `.tmp` left by a write that died is removed first;
 * rename replaces a link at `file` itself, never what it points to.
 */
export function writeWholeFile(file: string, text: string): void {
  const tmp = `${file}.tmp`;
  try {
    fs.unlinkSync(tmp);
  } catch {
    // none there: the usual case
  }
  writeNewFile(tmp, text);
  fs.renameSync(tmp, file);
}
