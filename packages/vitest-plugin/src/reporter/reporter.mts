// Main-process side of a guarded run: the run itself (report directory and
// the handoff to workers), crash attribution (Vitest only says that a worker
// exited) and the summary line.
import {
  GuardedRun,
  nodeFlagsToPassOn,
  rerunCanaryReports,
  type RerunLauncher,
  type RunnerResolution,
} from '@mate-guard/core/internal';
import { VerboseReporter, type Reporter, type TestModule, type Vitest } from 'vitest/node';

import { flagsWereHandedOver, handedOverArgs } from '../cli/flag-handover.mjs';
import { vitestBin } from '../cli/vitest-cli.mjs';
import { attribute, attributeEarlier, crashLine, markFailed, markLost } from './attribution.mjs';
import { PROJECT_SETTINGS } from '../plugin/project-settings.mjs';
import { selection } from '../selection.mjs';
import { tagSkipLines } from './skips.mjs';

const attached = new WeakSet<Vitest>();

/** The options among Vitest arguments that say where and how tests run: `--pool`, `--execArgv` (both spellings). */
function poolArgs(args: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < args.length; i++) {
    if (/^--(pool|execArgv)=/.test(args[i])) out.push([args[i]]);
    else if (/^--(pool|execArgv)$/.test(args[i]) && i + 1 < args.length) out.push([args[i], args[++i]]);
  }
  return out;
}

/**
 * Vitest prints the coverage table after every reporter's onTestRunEnd and
 * then calls this (undocumented) hook of the reporters that have it: the
 * summary waits for it, to stay the last line.
 */
export interface SummaryReporter extends Reporter {
  onFinishedReportCoverage(): void;
}

/** The run's reporters: `first` before every other (crashed files failed before they read results), `last` after (the summary closes the output). */
export interface RunReporters {
  first: Reporter;
  last: SummaryReporter;
}

/** The guarded run of this Vitest instance, once however many projects use the plugin: undefined when it has one already. */
export function startRun(vitest: Vitest, resolved: RunnerResolution): RunReporters | undefined {
  if (attached.has(vitest)) return undefined;
  attached.add(vitest);
  const run = new VitestRun(vitest, resolved);
  return { first: run.attributionReporter(), last: run.summaryReporter() };
}

/** From a project's configureVitest, before Vitest makes its reporters. */
export function attachReporters(vitest: Vitest, resolved: RunnerResolution): void {
  const run = startRun(vitest, resolved);
  if (!run) return;
  vitest.config.reporters.unshift(run.first);
  vitest.config.reporters.push(run.last);
}

class VitestRun {
  /**
   * One for the whole session: in watch mode every rerun keeps the report
   * directory and the handoff (reused workers keep their allocator's
   * configuration); each rerun ends with what happened since the last one.
   */
  private readonly run: GuardedRun;
  private projectsRecorded = false;

  constructor(
    private readonly vitest: Vitest,
    private readonly resolved: RunnerResolution,
  ) {
    // Now, before any worker starts: workers inherit the handoff.
    this.run = GuardedRun.start({
      runner: 'vitest',
      settings: this.resolved.settings,
      explicit: this.resolved.explicit,
    });
  }

  attributionReporter(): Reporter {
    return {
      onTestRunStart: () => {
        // Every project is configured by now: the record keeps each one's settings for `mate replay` (once: watch mode starts many runs).
        if (!this.projectsRecorded) {
          this.projectsRecorded = true;
          this.run.recordProjects(
            Object.fromEntries(
              this.vitest.projects.map((p) => [p.name, p.getProvidedContext()[PROJECT_SETTINGS] ?? this.run.settings]),
            ),
          );
        }
        const { logAllocations } = this.resolved.settings;
        this.say(`[mate-guard] guarding on: mode ${this.modes()}${logAllocations ? ', logging allocations' : ''}`);
      },
      onTestRunEnd: (testModules: ReadonlyArray<TestModule>) => {
        const crashed = this.run.crashed();
        for (const a of attribute(crashed, testModules)) {
          markFailed(a);
          this.say(crashLine(a) + (a.module ? '' : `:\n${a.text.trimEnd()}`));
        }
        for (const a of attributeEarlier(this.run.read().violations, crashed, testModules)) {
          if (!markLost(a)) continue;
          this.say(
            `[mate-guard] a test worker reported this to Vitest before a guard fault killed it; Vitest never received it:\n${a.text.trimEnd()}`,
          );
        }
      },
    };
  }

  summaryReporter(): SummaryReporter {
    // This run made coverage (Vitest says so before onTestRunEnd), and the summary waiting for its table.
    let covered = false;
    let pending: string | undefined;
    const flush = () => {
      if (pending !== undefined) this.say(pending);
      pending = undefined;
    };
    // Should the table's printing fail, the summary still comes out.
    process.once('exit', flush);
    return {
      onCoverage: () => {
        covered = true;
      },
      onFinishedReportCoverage: flush,
      onTestRunEnd: async (testModules: ReadonlyArray<TestModule>) => {
        const run = this.run;
        if (!this.verbose()) for (const line of tagSkipLines(testModules)) this.say(line);
        const reruns = this.rerunning()
          ? await rerunCanaryReports(run.read().violations, run.settings, this.rerunLauncher())
          : '';
        const watching = Boolean(this.vitest.config.watch);
        const verdict = run.finish({ status: Number(process.exitCode ?? 0), more: watching });
        const text = (reruns + verdict.text).trimEnd();
        if (covered && this.coverageTableFollows()) pending = text;
        else this.say(text);
        covered = false;
        // Damage found only when a worker exited fails no test: the exit code must still tell.
        if (verdict.exitCode !== 0 && !watching) process.exitCode = verdict.exitCode;
      },
    };
  }

  /** Vitest prints coverage for a run with failed tests only when told to (`coverage.reportOnFailure`). */
  private coverageTableFollows(): boolean {
    return this.vitest.state.getCountOfFailedTests() === 0 || Boolean(this.vitest.config.coverage.reportOnFailure);
  }

  /** mate-vitest reruns canary damage (plain vitest and watch mode do not). */
  private rerunning(): boolean {
    return this.resolved.settings.rerun && flagsWereHandedOver() && !this.vitest.config.watch;
  }

  /**
   * vitest run on just the damaged tests as Vitest selects them
   * (selection.mts, shared with `mate replay`: in the damaged projects only),
   * with this run's config, root, node flags, and the pool and workers' node
   * flags it was given (a test may need them: `--execArgv=--expose-gc`).
   */
  private rerunLauncher(): RerunLauncher {
    const configFile = this.vitest.vite.config.configFile;
    const options = [
      ...poolArgs(handedOverArgs()),
      ...(configFile ? [['--config', configFile]] : []),
      ['--root', this.vitest.config.root],
    ];
    return (group) => ({
      command: process.execPath,
      args: [
        ...nodeFlagsToPassOn(),
        vitestBin(import.meta.url),
        ...selection.select({
          positionals: [],
          options,
          tail: [],
          files: group.files,
          tests: group.tests,
          cwd: process.cwd(),
        }),
      ],
    });
  }

  /** The mode, or each project's where their plugins' options differ: `head (project a), tail (project b)`. */
  private modes(): string {
    const own = this.resolved.settings.mode;
    const of = this.vitest.projects.map(
      (p) => [p.name, p.getProvidedContext()[PROJECT_SETTINGS]?.mode ?? own] as const,
    );
    if (of.every(([, mode]) => mode === own)) return own;
    return of.map(([name, mode]) => `${mode} (project ${name})`).join(', ');
  }

  private verbose(): boolean {
    return this.vitest.config.reporters.some((r) =>
      Array.isArray(r) ? r[0] === 'verbose' : r instanceof VerboseReporter,
    );
  }

  // stderr, like the reports: stdout may carry a JSON reporter's output.
  private say(text: string): void {
    this.vitest.logger.error(text);
  }
}
