// A root config that defines projects (`test.projects: ['packages/*']`):
// Vitest runs the root plugin's config() but not its configureVitest(), and
// a project with a config of its own does not load the root's plugins, so
// without this nothing would be guarded, silently. Two reporters the root
// config adds take their place: once Vitest is set up (onInit), every
// project without the plugin gets the worker setup file, and the run starts
// unless a project's own plugin started it (or another process owns it).
import type { RunnerResolution } from '@mate-guard/core/internal';
import type { Reporter, TestProject, Vitest } from 'vitest/node';

import { startRun, type RunReporters, type SummaryReporter } from '../reporter/reporter.mjs';

export const PLUGIN_NAME = 'mate-guard:vitest';

const loadsPlugin = (project: TestProject): boolean => project.vite.config.plugins.some((p) => p.name === PLUGIN_NAME);

type RunEndArgs = Parameters<NonNullable<Reporter['onTestRunEnd']>>;
type RunStartArgs = Parameters<NonNullable<Reporter['onTestRunStart']>>;

/**
 * [first, last]: to put before and after the config's own reporters.
 * `guardProject` readies one project (the setup file, the pool warning);
 * `owner`: this process starts the run (not a rerun's or guard-run's child).
 */
export function rootProjectReporters(
  resolved: RunnerResolution,
  owner: boolean,
  guardProject: (vitest: Vitest, project: TestProject) => void,
): [Reporter, Reporter] {
  let run: RunReporters | undefined;
  const first: Reporter = {
    onInit(vitest: Vitest) {
      const bare = vitest.projects.filter((p) => !loadsPlugin(p));
      for (const project of bare) guardProject(vitest, project);
      if (bare.length > 0 && owner) run = startRun(vitest, resolved);
    },
    onTestRunStart: (...args: RunStartArgs) => run?.first.onTestRunStart?.(...args),
    onTestRunEnd: (...args: RunEndArgs) => run?.first.onTestRunEnd?.(...args),
  };
  const last: SummaryReporter = {
    onCoverage: (coverage: unknown) => run?.last.onCoverage?.(coverage),
    onTestRunEnd: (...args: RunEndArgs) => run?.last.onTestRunEnd?.(...args),
    onFinishedReportCoverage: () => run?.last.onFinishedReportCoverage(),
  };
  return [first, last];
}
