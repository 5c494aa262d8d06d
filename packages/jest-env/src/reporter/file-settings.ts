// A project's testEnvironmentOptions, checked in Jest's main process as each
// file is sent to run: a bad value then stops the run with the one line and
// status every entry point uses, instead of failing every file inside a
// worker ("Test suite failed to run", status 1). A file's own
// `@jest-environment-options` docblock is only read in the worker: a bad
// value there still fails that file.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { exitOnConfigError, GuardConfigError } from '@mate-guard/core/internal';
import type { Config } from '@jest/types';

import { resolveJestSettings } from '../environment/settings';

const PACKAGE_ROOT = fs.realpathSync(path.resolve(__dirname, '..', '..'));
const checked = new WeakSet<Config.ProjectConfig>();

function realpath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

/** Whether the project's test environment is this package's. */
function usesGuardEnvironment(config: Config.ProjectConfig): boolean {
  return realpath(config.testEnvironment).startsWith(PACKAGE_ROOT + path.sep);
}

export function checkFileSettings(config: Config.ProjectConfig): void {
  if (checked.has(config)) return;
  checked.add(config);
  if (!usesGuardEnvironment(config)) return;
  try {
    resolveJestSettings(config.testEnvironmentOptions);
  } catch (err) {
    if (!(err instanceof GuardConfigError)) throw err;
    exitOnConfigError('mate-guard', err);
  }
}
