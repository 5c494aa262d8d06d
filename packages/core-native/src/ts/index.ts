// @mate-guard/core: guard-page allocations for JS test suites. The user API;
// runner plugins use '@mate-guard/core/internal' as well.
export {
  installGuardAllocator,
  isGuardAllocatorActive,
  guardedBuffer,
  checkCanaries,
  setCurrentTest,
  stats,
  snapshot,
  type GuardViolation,
  type GuardStats,
  type GuardAllocation,
} from './install/install';
export type { GuardAllocatorConfig, ResolvedGuardConfig } from './install/config';
export type { PassThroughCounts } from './install/realm';
export { GuardConfigError } from './errors';
export type { GuardMode } from './settings/table';
export type { ReportKind } from './report/kinds';
export type { ViolationEvent } from './report/event';
export { GUARD_INCOMPATIBLE_TAG, GRAPH_CAPTURE_TAG, type GuardTag } from './tags';
