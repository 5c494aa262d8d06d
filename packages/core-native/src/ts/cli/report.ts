// `mate report <dir>...`: the JSON reports of any number of runs, shards
// and workers as one: every report once, and the run's verdict (verdict.ts)
// on them together: the merged summary, and an exit code that fails when
// any violation is not suppressed (a CI step after sharded jobs that each
// kept their report directory).
import * as fs from 'node:fs';
import * as path from 'node:path';

import { GuardConfigError } from '../errors';
import type { ViolationEvent } from '../report/event';
import { EVENT_FILE } from '../report/files';
import { reportText } from '../report/render';
import { readReportDir, readRunInfo, type RunReport } from '../run/report-dir';
import { formatSummary } from '../run/summary';
import { verdictOf } from '../run/verdict';

export const REPORT_USAGE = `Usage: mate report <dir>...

Reads the mate-guard report directories of any number of runs, shards and
workers (a run given --guard-report-dir <dir> / MATE_<RUNNER>_GUARD_REPORT_DIR /
mate guard-run --report-dir <dir> keeps one inside <dir>; directories are
searched recursively), prints each violation report once, then the merged
summary line. Exits 1 when any violation is not suppressed, 0 when none,
2 when a directory is missing or holds no mate-guard run.
`;

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
    if (entries.some((e) => e.isFile() && (e.name === 'run.json' || EVENT_FILE.test(e.name) || /^stats-\d+-\d+\.json$/.test(e.name)))) out.push(dir);
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

export function mateReport(args: readonly string[]): number {
  if (args.length === 0) throw new GuardConfigError('no report directory given: mate report <dir>...');
  const seenDirs = new Set<string>();
  const runs: RunReport[] = [];
  for (const arg of args) {
    if (arg.startsWith('-')) throw new GuardConfigError(`unknown option ${JSON.stringify(arg)}; mate report takes directories only`);
    if (!fs.existsSync(arg) || !fs.statSync(arg).isDirectory()) throw new GuardConfigError(`${arg}: no such directory`);
    const found = runDirs(arg);
    if (found.length === 0) throw new GuardConfigError(`${arg}: no mate-guard run in it (a run keeps its directory when given --guard-report-dir)`);
    for (const dir of found) {
      const real = fs.realpathSync(dir);
      if (seenDirs.has(real)) continue;
      seenDirs.add(real);
      runs.push(readReportDir(dir));
    }
  }
  const seen = new Set<string>();
  let text = '';
  const unique = runs.map((run) => ({
    ...run,
    violations: run.violations.filter((e) => {
      const id = identity(e);
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    }),
  }));
  for (const run of unique) for (const e of run.violations) if (!e.suppressed) text += reportText(e);
  // No runner's result covers these violations: each one not suppressed fails.
  const verdict = verdictOf(unique, undefined);
  const labels = runs.map((r) => readRunInfo(r.dir)?.runner ?? 'run');
  const kinds = [...new Set(labels)].map((l) => `${labels.filter((x) => x === l).length} ${l}`).join(', ');
  text += `[mate-guard] merged ${runs.length} report director${runs.length === 1 ? 'y' : 'ies'} (${kinds})\n`;
  text += formatSummary(verdict.summary);
  process.stdout.write(text);
  return verdict.exitCode;
}
