// `mate report <dir>...`: the JSON reports of any number of runs, shards
// and workers as one: every report once, and the run's verdict (verdict.ts)
// on them together: the merged summary, and an exit code that fails when
// any violation is not suppressed (a CI step after sharded jobs that each
// kept their report directory).
import * as fs from 'node:fs';
import * as path from 'node:path';

import { GuardConfigError } from '../errors';
import type { ViolationEvent } from '../report/event';
import { EVENT_FILE, UNFINISHED_EVENT_FILE } from '../report/files';
import { ciFormatText } from '../report/ci-formats';
import { reportText, rerunText } from '../report/render';
import type { RunPlace } from '../report/source-paths';
import { readReportDir, readRunInfo, runInfoOf, type RunReport } from '../run/report-dir';
import { formatSummary, formatUnreadable } from '../run/summary';
import { verdictOf } from '../run/verdict';
import { visible } from '../text/escape';

export const REPORT_USAGE = `Usage: mate report <dir>... [--format text|sarif|github]

Reads the mate-guard report directories of any number of runs, shards and
workers (a run given --guard-report-dir <dir> / MATE_<RUNNER>_GUARD_REPORT_DIR /
mate guard-run --report-dir <dir> keeps one inside <dir>; directories are
searched recursively), prints each violation report once, then the merged
summary line. Exits 1 when any violation is not suppressed (or a report file
cannot be read: it is named and counted as a violation), 0 when none, 2 when
a directory is missing or holds no mate-guard run.

  --format text     the reports and the summary (default)
  --format sarif    SARIF 2.1.0 on stdout (code scanning: one result per
                    violation, at its access site in the repository);
                    the summary goes to stderr
  --format github   one GitHub Actions annotation per violation
                    (::error file=...,line=...::), then the summary
`;

const FORMATS = ['text', 'sarif', 'github'] as const;
type Format = (typeof FORMATS)[number];

/** Directories below `root` (itself included) that hold a run's files. */
function runDirs(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    if (
      entries.some(
        (e) =>
          e.isFile() &&
          (e.name === 'run.json' ||
            EVENT_FILE.test(e.name) ||
            UNFINISHED_EVENT_FILE.test(e.name) ||
            /^stats-\d+-\d+\.json$/.test(e.name)),
      )
    )
      out.push(dir);
    for (const e of entries) if (e.isDirectory()) walk(path.join(dir, e.name));
  };
  walk(root);
  return out;
}

/**
 * The same violation filed twice (a directory named twice, or copied into
 * two artifacts) is one: the process, the allocation and where it was hit.
 */
const identity = (e: ViolationEvent) =>
  JSON.stringify([e.kind, e.pid, e.allocation?.id, e.allocation?.start, e.address, e.test, e.damage]);

/** `--format <f>` / `--format=<f>` and the directories. */
function parseArgs(args: readonly string[]): { dirs: string[]; format: Format } {
  const dirs: string[] = [];
  let format: Format = 'text';
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--format' || arg.startsWith('--format=')) {
      const value = arg === '--format' ? args[++i] : arg.slice('--format='.length);
      if (value === undefined) throw new GuardConfigError(`--format needs a value: ${FORMATS.join(', ')}`);
      if (!(FORMATS as readonly string[]).includes(value))
        throw new GuardConfigError(`--format ${JSON.stringify(value)} is not a format; known: ${FORMATS.join(', ')}`);
      format = value as Format;
    } else if (arg.startsWith('-')) {
      throw new GuardConfigError(
        `unknown option ${JSON.stringify(arg)}; mate report takes directories and --format ${FORMATS.join('|')}`,
      );
    } else {
      dirs.push(arg);
    }
  }
  if (dirs.length === 0) throw new GuardConfigError('no report directory given: mate report <dir>...');
  return { dirs, format };
}

/** Where a run ran, as its run.json recorded it (runs before it did: undefined, paths taken from here). */
function runPlace(dir: string): RunPlace | undefined {
  const info = readRunInfo(dir);
  return info?.cwd && info.root ? { cwd: info.cwd, root: info.root } : undefined;
}

export function mateReport(args: readonly string[]): number {
  const { dirs, format } = parseArgs(args);
  const seenDirs = new Set<string>();
  const runs: RunReport[] = [];
  for (const arg of dirs) {
    if (!fs.existsSync(arg)) throw new GuardConfigError(`${visible(arg)}: no such directory`);
    if (!fs.statSync(arg).isDirectory())
      throw new GuardConfigError(`${visible(arg)} is not a directory: mate report reads report directories`);
    const found = runDirs(arg);
    if (found.length === 0)
      throw new GuardConfigError(
        `${arg}: no mate-guard run in it (a run keeps its directory when given --guard-report-dir)`,
      );
    for (const dir of found) {
      const real = fs.realpathSync(dir);
      if (seenDirs.has(real)) continue;
      seenDirs.add(real);
      runs.push(readReportDir(dir));
    }
  }
  const seen = new Set<string>();
  const unique = runs.map((run) => ({
    ...run,
    violations: run.violations.filter((e) => {
      const id = identity(e);
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    }),
  }));
  // No runner's result covers these violations: each one not suppressed fails.
  const verdict = verdictOf(unique, undefined);
  // run.json is the artifact's word: shown, never obeyed.
  const labels = runs.map((r) => visible(String(readRunInfo(r.dir)?.runner ?? 'run')));
  const kinds = [...new Set(labels)].map((l) => `${labels.filter((x) => x === l).length} ${l}`).join(', ');
  const closing = `[mate-guard] merged ${runs.length} report director${runs.length === 1 ? 'y' : 'ies'} (${kinds})\n${formatSummary(verdict.summary)}`;
  const unreadable = unique.flatMap((r) => r.unreadable);
  // Named on stderr whatever the format: a file cut short is never passed over.
  process.stderr.write(formatUnreadable(unreadable));
  // run.json only names a run's runner and where it ran: one that cannot be read is named, and fails nothing.
  for (const r of runs) {
    const { why } = runInfoOf(r.dir);
    if (why)
      process.stderr.write(
        `[mate-guard] warning: cannot read run file ${visible(path.join(r.dir, 'run.json'))}: ${visible(why)}; that run is shown without its runner and paths\n`,
      );
  }
  const events = unique.flatMap((r) => {
    const run = runPlace(r.dir);
    return r.violations.map((event) => ({ event, run }));
  });
  if (format === 'sarif') {
    process.stdout.write(ciFormatText('sarif', { events, unreadable }) + '\n');
    process.stderr.write(closing);
  } else if (format === 'github') {
    process.stdout.write(ciFormatText('github', { events, unreadable }) + closing);
  } else {
    let text = '';
    // Each report as the run's terminal showed it: the rerun's fault (or what the rerun found) under it.
    for (const { event } of events) if (!event.suppressed) text += reportText(event) + rerunText(event);
    process.stdout.write(text + closing);
  }
  return verdict.exitCode;
}
