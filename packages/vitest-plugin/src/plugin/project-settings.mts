// Each project's own plugin options: a project whose config loads the
// plugin resolves its settings from its own options (flags and
// MATE_VITEST_GUARD_* still rank above them), and its workers install
// those, not the settings of whichever project started the run. The run
// itself (its report directory, its owner) stays the one the handoff names.
import type { GuardSettings } from '@mate-guard/core/internal';

export const PROJECT_SETTINGS = 'mate-guard:project-settings';

declare module 'vitest' {
  interface ProvidedContext {
    'mate-guard:project-settings': GuardSettings;
  }
}

/** What a project's worker installs: the run's settings, with the project's own where it has a plugin of its own. */
export function projectSettings(run: GuardSettings, own: GuardSettings | undefined): GuardSettings {
  return own ? { ...run, ...own, enabled: true, reportDir: run.reportDir } : run;
}
