// @mate-guard/core: guard-page allocations for JS test suites.
export {
  installGuardAllocator,
  isGuardAllocatorActive,
  guardAllocatorConfig,
  guardedBuffer,
  checkCanaries,
  setCurrentTest,
  stats,
  snapshot,
  guardRealm,
  flushGuardStats,
  type GuardViolation,
  type GuardStats,
  type GuardAllocation,
} from './install';
export type { GuardAllocatorConfig, ResolvedGuardConfig } from './config';
export { GuardConfigError } from './errors';
export {
  SETTINGS,
  GUARD_MODES,
  envName,
  parseGuardFlags,
  resolveGuardSettings,
  describeFlags,
  type GuardMode,
  type RunnerName,
  type RunnerGuardSettings,
  type ResolveInput,
  type ParsedFlags,
} from './settings';
export {
  GUARD_INCOMPATIBLE_TAG,
  GRAPH_CAPTURE_TAG,
  GUARD_TAGS,
  GUARD_SKIP_REASONS,
  GUARD_TAG_DESCRIPTIONS,
  guardSkipReason,
  isGuardTag,
  type GuardTag,
} from './tags';
export { noteTagSkip, type ProcessGuardStats } from './run-stats';
export type { PassThroughCounts } from './realm';
export {
  REPORT_DIR_ENV,
  createRunReportDir,
  readRunReport,
  fatalViolations,
  summarize,
  formatSummary,
  finishRunReportDir,
  type ViolationEvent,
  type RunReport,
  type SummaryCounts,
} from './run-report';
export { parseBoolean } from './values';
export {
  formatTestPath,
  installForRunner,
  beginGuardedTest,
  endGuardedTest,
  violationError,
  RunReportCollector,
} from './runner-support';
export { formatCrashAttribution } from './crash-attribution';
export { settingsToFlags } from './settings-flags';
export { runChild, exitStatusOf, type ChildExit } from './child-process';
