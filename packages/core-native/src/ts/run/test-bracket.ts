// What every runner plugin does the same way, written once: install in a
// worker, bracket each test, collect the run's reports in the main process.
import * as path from 'node:path';

import { checkCanaries, installGuardAllocator, isGuardAllocatorActive, setCurrentTest, type GuardViolation } from './install';
import {
  createRunReportDir,
  fatalViolations,
  finishRunReportDir,
  formatSummary,
  readRunReport,
  REPORT_DIR_ENV,
  summarize,
  type RunReport,
  type ViolationEvent,
} from './run-report';
import type { RunnerGuardSettings } from './settings';

/** `<file> > <suite> > <test>`, the file relative to the working directory. */
export function formatTestPath(file: string | undefined, titles: readonly string[]): string {
  const parts = titles.filter((t) => t.length > 0);
  if (file) parts.unshift(path.isAbsolute(file) ? path.relative(process.cwd(), file) || file : file);
  return parts.join(' > ');
}

/** Installs the allocator in a test worker from resolved runner settings. */
export function installForRunner(settings: RunnerGuardSettings): void {
  installGuardAllocator({
    mode: settings.mode,
    logAllocations: settings.logAllocations,
    ...(process.env[REPORT_DIR_ENV] ? { reportDir: process.env[REPORT_DIR_ENV] } : {}),
  });
}

// Damage found before a test started (in a hook, or when an older buffer was
// freed): not this test's doing, but never dropped; it fails this test at
// its end, and the report names the test that allocated the memory.
let carried: GuardViolation[] = [];

/** Names the test in reports and starts its canary scope. */
export function beginGuardedTest(name: string): void {
  if (!isGuardAllocatorActive()) return;
  carried.push(...checkCanaries());
  setCurrentTest(name);
}

/**
 * Ends a test: violations of the allocations it made, damage found at free
 * meanwhile, and anything carried from before it. A non-empty result must
 * fail the test.
 */
export function endGuardedTest(): GuardViolation[] {
  if (!isGuardAllocatorActive()) return [];
  const found = [...carried, ...checkCanaries()];
  carried = [];
  setCurrentTest(null);
  return found;
}

/** An Error that fails a test with the report text as its message. */
export function violationError(found: readonly GuardViolation[]): Error {
  const err = new Error(`mate-guard found ${found.length === 1 ? 'a memory violation' : `${found.length} memory violations`}:\n${found.map((v) => v.text).join('')}`);
  err.name = 'GuardViolationError';
  err.stack = `${err.name}: ${err.message}`; // the report is the useful part
  return err;
}

/** The main process side of one guarded run. */
export class RunReportCollector {
  readonly dir: string;

  constructor(runner: string, env: NodeJS.ProcessEnv = process.env) {
    this.dir = createRunReportDir(runner, env);
  }

  read(): RunReport {
    return readRunReport(this.dir);
  }

  /** Reports of processes that died from a guard fault, for attribution. */
  fatal(): ViolationEvent[] {
    return fatalViolations(this.read());
  }

  /**
   * The closing text: the summary line, a warning if anything ran
   * unguarded, and where the JSON reports are. Cleans up when clean.
   */
  finish(skippedByTagInMain = 0): { text: string; report: RunReport } {
    const report = this.read();
    let text = formatSummary(summarize(report, skippedByTagInMain));
    if (report.violations.length) text += `[mate-guard] reports: ${report.dir}\n`;
    finishRunReportDir(report);
    return { text, report };
  }
}
