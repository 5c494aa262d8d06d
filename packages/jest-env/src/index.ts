// @mate-guard/jest-env: `testEnvironment: '@mate-guard/jest-env'`.
export {
  GuardEnvironment,
  GuardEnvironment as TestEnvironment,
  GuardEnvironment as default,
} from './environment/environment';
export { guardIncompatible, graphCapture } from './environment/tags';
export { resolveJestSettings } from './environment/settings';
