// Main-process side of a guarded run: the run's report directory, crash
// attribution (Vitest only says that a worker exited) and the summary line.
import { RunReportCollector, type RunnerGuardSettings } from '@mate-guard/core';
import { VerboseReporter, type Reporter, type TestModule, type Vitest } from 'vitest/node';

import { attribute, crashLine, markFailed } from './attribution.mjs';
import { tagSkipLines } from './skips.mjs';

const attached = new WeakSet<Vitest>();

/** One per Vitest instance, however many projects use the plugin. */
export function attachReporters(vitest: Vitest, settings: RunnerGuardSettings): void {
  if (attached.has(vitest)) return;
  attached.add(vitest);
  const run = new GuardedRun(vitest, settings);
  // First: crashed files get their failure before other reporters read results.
  vitest.config.reporters.unshift(run.attributionReporter());
  // Last: the summary closes the run's output.
  vitest.config.reporters.push(run.summaryReporter());
}

class GuardedRun {
  private collector: RunReportCollector | undefined;

  constructor(private readonly vitest: Vitest, private readonly settings: RunnerGuardSettings) {
    // Now, before any worker starts: workers inherit MATE_GUARD_REPORT_DIR.
    this.collector = new RunReportCollector('vitest');
  }

  attributionReporter(): Reporter {
    return {
      onTestRunStart: () => {
        this.collector ??= new RunReportCollector('vitest'); // watch mode: a fresh directory per run
        const { mode, logAllocations } = this.settings;
        this.say(`[mate-guard] guarding on: mode ${mode}${logAllocations ? ', logging allocations' : ''}`);
      },
      onTestRunEnd: (testModules: ReadonlyArray<TestModule>) => {
        if (!this.collector) return;
        for (const a of attribute(this.collector.fatal(), testModules)) {
          markFailed(a);
          this.say(crashLine(a) + (a.module ? '' : `:\n${a.event.text.trimEnd()}`));
        }
      },
    };
  }

  summaryReporter(): Reporter {
    return {
      onTestRunEnd: (testModules: ReadonlyArray<TestModule>) => {
        if (!this.collector) return;
        if (!this.verbose()) for (const line of tagSkipLines(testModules)) this.say(line);
        const { text, report } = this.collector.finish();
        this.collector = undefined;
        this.say(text.trimEnd());
        // Damage found only when a worker exited fails no test: the exit code must still tell.
        if (report.violations.length > 0) process.exitCode = 1;
      },
    };
  }

  private verbose(): boolean {
    return this.vitest.config.reporters.some((r) => (Array.isArray(r) ? r[0] === 'verbose' : r instanceof VerboseReporter));
  }

  // stderr, like the reports: stdout may carry a JSON reporter's output.
  private say(text: string): void {
    this.vitest.logger.error(text);
  }
}
