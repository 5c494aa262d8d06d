// How the main process hands the resolved settings to the worker setup file.
import type { RunnerGuardSettings } from '@mate-guard/core';

export const PROVIDE_KEY = 'mateGuardVitestSettings';

declare module 'vitest' {
  export interface ProvidedContext {
    mateGuardVitestSettings: RunnerGuardSettings;
  }
}
