// guardAlloc(): the Vitest plugin. Always declares the guard tags (strictTags
// would otherwise fail tagged files); when guarding is on it injects the
// worker setup file first and starts the guarded run (report directory,
// handoff to the workers, crash attribution and the summary).
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { exitOnConfigError, GuardConfigError, runOwnership, type RunnerResolution } from '@mate-guard/core/internal';
import type { Plugin } from 'vitest/config';
import type { TestProject, Vitest } from 'vitest/node';

import { flagsWereHandedOver } from '../cli/flag-handover.mjs';
import { attachReporters } from '../reporter/reporter.mjs';
import type { GuardAllocOptions } from './options.mjs';
import { resolveVitestSettings } from './settings.mjs';
import { guardTagDefinitions } from './tags.mjs';

const SETUP_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'setup.mjs');

const THREAD_POOLS = new Set(['threads', 'vmThreads']);

type TestConfig = NonNullable<import('vitest/config').ViteUserConfig['test']>;

function declareTags(test: TestConfig): void {
  const declared = new Set((test.tags ?? []).map((t) => t.name));
  test.tags = [...(test.tags ?? []), ...guardTagDefinitions().filter((t) => !declared.has(t.name))];
}

function injectSetup(test: TestConfig): void {
  const given = test.setupFiles === undefined ? [] : Array.isArray(test.setupFiles) ? test.setupFiles : [test.setupFiles];
  // First, so the allocator is in place before user setup files allocate.
  test.setupFiles = [SETUP_FILE, ...given.filter((f) => f !== SETUP_FILE)];
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
  return {
    name: 'mate-guard:vitest',
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
      if (resolved.settings.enabled) injectSetup(test);
    },
    configureVitest({ vitest, project }) {
      if (!resolved?.settings.enabled || !owner) return;
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
