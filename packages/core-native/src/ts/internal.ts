// @mate-guard/core/internal: the plumbing the runner plugins share (settings
// pipeline, worker install, test bracket, tag policy, run lifecycle) and the
// runner contract they implement (RunnerAdapter). Not a user API: it changes
// with the plugins; a name no runner package uses is not exported here.
export {
  installFromSettings,
  guardAllocatorConfig,
  guardRealm,
  flushGuardStats,
  checkCanaries,
  isGuardAllocatorActive,
  type GuardViolation,
} from './install/install';
export {
  GuardConfigError,
  CONFIG_ERROR_EXIT,
  exitOnConfigError,
  orExitOnConfigError,
  runCli,
  wantsHelp,
} from './errors';
export { processState } from './run/process-state';
export {
  rowsOn,
  spell,
  type GuardSettings,
  type GuardMode,
  type RunnerSettingKey,
  type SettingRow,
} from './settings/table';
export { parseFlags, RUNNER_FLAGS, type ParsedFlags } from './settings/flags';
export {
  resolveRunnerSettings,
  readOptions,
  checkOptionNames,
  optionsLayer,
  BY_KEY,
  type Layer,
  type OptionSpelling,
  type RunnerResolution,
} from './settings/resolve';
export { refuseWithoutDevice } from './settings/device-only';
export { readHandoff, HANDOFF_ENV } from './settings/handoff';
export { describeRunnerFlags, flagUsage, type ConfigColumn } from './settings/docs';
export { GUARD_TAGS, GUARD_SKIP_REASONS, GUARD_TAG_DESCRIPTIONS, guardSkipReason, isGuardTag } from './tags';
export { GUARD_INCOMPATIBLE_TAG, GRAPH_CAPTURE_TAG, type GuardTag } from './tags';
export { noteTagSkip } from './run/process-stats';
export { formatTestPath } from './report/test-path';
export {
  beginGuardedTest,
  checkGuardedTest,
  endGuardedTest,
  takeOutsideDamage,
  violationError,
  outsideTestsError,
} from './run/test-bracket';
export { GuardedRun, runExitCode } from './run/lifecycle';
export { replayedProjectSettings } from './run/record';
export { runOwnership, runsAlone } from './run/owner';
export { endRunAtExit, endRound } from './run/end';
export { superviseRun } from './run/supervise';
export { reportText } from './report/render';
export { rerunCanaryReports, type RerunLauncher } from './run/rerun';
export { NODE_ARGS, watchRequested, withoutWatchAndShards } from './run/runner-args';
export {
  narrowedReruns,
  runAsGiven,
  testNamePattern,
  testProjects,
  type RunnerArgs,
  type RunnerSelection,
  type SelectionInput,
} from './run/selection';
export type { RunnerAdapter, RunnerProgram } from './run/runner-adapter';
export { NODE_OPTIONS, NODE_TEST_OPTIONS } from './run/node-options';
export type { OptionKind, OptionRow, RunnerOptions } from './run/runner-options';
export { crashFailure, crashInFile, workerCrash, type CrashFailure } from './run/attribution';
export { earlierReports } from './run/earlier';
export { markReportsShown, markResultsShown, markTestsStarted, readReportDir } from './run/report-dir';
export { checkRunnerVersion, versionInRange } from './run/runner-version';
export { nodeFlagsToPassOn, runChild, type ChildExit } from './run/child';
export type { ViolationEvent } from './report/event';
