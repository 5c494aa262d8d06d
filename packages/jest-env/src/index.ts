// @mate-guard/jest-env: `testEnvironment: '@mate-guard/jest-env'`.
export { GuardEnvironment, GuardEnvironment as TestEnvironment, GuardEnvironment as default } from './environment';
export { guardIncompatible, graphCapture } from './tags';
export { resolveJestSettings, FLAGS_ENV } from './settings';
export type { RunnerGuardSettings as JestGuardSettings } from '@mate-guard/core';
