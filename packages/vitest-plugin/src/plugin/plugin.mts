// guardAlloc(): the Vitest plugin. Always declares the guard tags (strictTags
// would otherwise fail tagged files); when guarding is on it injects the
// worker setup file first and starts the guarded run (report directory,
// handoff to the workers, crash attribution and the summary).
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  exitOnConfigError,
  GuardConfigError,
  replayedProjectSettings,
  runOwnership,
  type RunnerResolution,
} from '@mate-guard/core/internal';
import type { Plugin } from 'vitest/config';
import type { TestProject, Vitest } from 'vitest/node';

import { flagsWereHandedOver } from '../cli/flag-handover.mjs';
import { attachReporters } from '../reporter/reporter.mjs';
import type { GuardAllocOptions } from './options.mjs';
import { PROJECT_SETTINGS } from './project-settings.mjs';
import { PLUGIN_NAME, rootProjectReporters } from './root-projects.mjs';
import { resolveVitestSettings } from './settings.mjs';
import { guardTagDefinitions } from './tags.mjs';
import { checkVitestVersion } from './vitest-version.mjs';

const SETUP_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'setup.mjs');

const THREAD_POOLS = new Set(['threads', 'vmThreads']);

type TestConfig = NonNullable<import('vitest/config').ViteUserConfig['test']>;

function declareTags(test: TestConfig): void {
  const declared = new Set((test.tags ?? []).map((t) => t.name));
  test.tags = [...(test.tags ?? []), ...guardTagDefinitions().filter((t) => !declared.has(t.name))];
}

function injectSetup(test: TestConfig): void {
  const given =
    test.setupFiles === undefined ? [] : Array.isArray(test.setupFiles) ? test.setupFiles : [test.setupFiles];
  // First, so the allocator is in place before user setup files allocate.
  test.setupFiles = [SETUP_FILE, ...given.filter((f) => f !== SETUP_FILE)];
}

/** A project resolved without the plugin (a root config's project), readied for guarding: the setup file first. */
function guardProject(vitest: Vitest, project: TestProject): void {
  project.config.setupFiles = [SETUP_FILE, ...project.config.setupFiles.filter((f) => f !== SETUP_FILE)];
  warnThreads(vitest, project);
}

/** Vitest's reporters when a config names none. */
const defaultReporters = (): string[] =>
  process.env.GITHUB_ACTIONS === 'true' ? ['default', 'github-actions'] : ['default'];

/** The config's reporters with `first` and `last` around them (Vitest's default when it names none). */
function around(test: TestConfig, [first, last]: [unknown, unknown]): TestConfig['reporters'] {
  const given =
    test.reporters === undefined
      ? defaultReporters()
      : Array.isArray(test.reporters)
        ? test.reporters
        : [test.reporters];
  return [first, ...given, last] as TestConfig['reporters'];
}

function warnThreads(vitest: Vitest, project: TestProject): void {
  const pool = String(project.config.pool);
  if (!THREAD_POOLS.has(pool)) return;
  vitest.logger.warn(
    `[mate-guard] warning: pool "${pool}" runs test files inside one process, so a guard fault ends the whole run ` +
      `(the report is still printed). Use pool "forks" (the default) to keep the run going and name the failed file.`,
  );
}

/**
 * A bad setting (or no usable native binary): the one line every entry
 * point prints, and its status; thrown, it would land in Vitest's boxed
 * "Startup Error" with status 1. Anything else is rethrown.
 */
function exitOnSettingError(err: unknown): never {
  if (!(err instanceof GuardConfigError)) throw err;
  exitOnConfigError(flagsWereHandedOver() ? 'mate-vitest' : 'mate-guard', err);
}

/** The Vitest plugin. Guarding is off unless a flag, MATE_VITEST_GUARD_* or `enabled: true` turns it on. */
export function guardAlloc(options?: GuardAllocOptions): Plugin {
  let resolved: RunnerResolution | undefined;
  let owner = true;
  let rootReporters: ReturnType<typeof rootProjectReporters> | undefined;
  return {
    name: PLUGIN_NAME,
    config(config) {
      // Resolved here so a bad value stops vitest before any test file loads.
      try {
        // Vitest's main process owns the run unless another process does (a
        // mate-* rerun, mate guard-run): then it handed its settings over, to
        // use as they are, and the report is that owner's.
        const { owns, handed } = runOwnership(true);
        owner = owns;
        resolved = handed ? { settings: handed.settings, explicit: handed.explicit } : resolveVitestSettings(options);
      } catch (err) {
        exitOnSettingError(err);
      }
      const test = (config.test ??= {});
      declareTags(test);
      if (!resolved.settings.enabled) return;
      try {
        checkVitestVersion();
      } catch (err) {
        exitOnSettingError(err);
      }
      injectSetup(test);
      // Projects: their configs do not load this plugin; guard them from here.
      if (test.projects) {
        rootReporters = rootProjectReporters(resolved, owner, guardProject);
        test.reporters = around(test, rootReporters);
      }
    },
    configResolved(viteConfig) {
      // `--reporter` on the command line replaces the config's reporters,
      // ours with them: in Vitest's merged options (its plugin's, an
      // internal) they become the config's, as Vitest would resolve them
      // (a relative path from the working directory, the config's options
      // for a name it lists), between ours.
      const merged = (viteConfig as { _vitest?: TestConfig & { reporter?: string | string[] } })._vitest;
      if (!rootReporters || !merged?.reporter) return;
      const configured = new Map<string, unknown>();
      for (const r of Array.isArray(merged.reporters) ? merged.reporters : [])
        if (Array.isArray(r) && typeof r[0] === 'string') configured.set(r[0], r[1]);
      const cli = [...new Set(Array.isArray(merged.reporter) ? merged.reporter : [merged.reporter])].filter(Boolean);
      const named = cli.map((r) => [/^\.\.?\//.test(r) ? path.resolve(r) : r, configured.get(r) ?? {}]);
      merged.reporters = [rootReporters[0], ...named, rootReporters[1]] as TestConfig['reporters'];
      delete merged.reporter;
    },
    configureVitest({ vitest, project }) {
      if (!resolved?.settings.enabled || !owner) return;
      // This project's options, for its workers alone (setup.mts): another project's plugin started the run.
      // `mate replay` hands over each project's recorded settings: they stand for the project's options then.
      try {
        project.provide(PROJECT_SETTINGS, replayedProjectSettings(project.name) ?? resolved.settings);
      } catch (err) {
        exitOnSettingError(err);
      }
      warnThreads(vitest, project);
      // The run starts here (a machine with no usable native binary stops it).
      try {
        attachReporters(vitest, resolved);
      } catch (err) {
        exitOnSettingError(err);
      }
    },
  };
}
