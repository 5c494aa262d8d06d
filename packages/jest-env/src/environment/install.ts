// Installing the allocator for one test file, with an error a user can act
// on when files of one worker ask for different configurations.
import {
  guardAllocatorConfig,
  GuardConfigError,
  installFromSettings,
  type GuardSettings,
} from '@mate-guard/core/internal';

/** Installs (or reuses) the worker's allocator for a file's settings. */
export function installForFile(settings: GuardSettings, testPath: string): void {
  const before = guardAllocatorConfig();
  try {
    installFromSettings(settings);
  } catch (err) {
    if (!before) throw err;
    // One process has one allocator; Jest reuses workers across files.
    const error = new GuardConfigError(
      `mate-guard: ${testPath} asks for guardMode ${JSON.stringify(settings.mode)} and guardLogAllocations ` +
        `${String(settings.logAllocations)}, but this Jest process already guards with guardMode ` +
        `${JSON.stringify(before.mode)} and guardLogAllocations ${String(before.logAllocations)} for an earlier file. ` +
        'Set one configuration for the whole run (mate-jest --guard-mode, MATE_JEST_GUARD_MODE or ' +
        'testEnvironmentOptions) or run this file in a run of its own.',
    );
    error.stack = `${error.name}: ${error.message}`;
    throw error;
  }
}
