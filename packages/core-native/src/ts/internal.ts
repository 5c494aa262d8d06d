// @mate-guard/core/internal: the plumbing the runner plugins share (settings
// pipeline, worker install, test bracket, tag policy, run lifecycle). Not a
// user API: it changes with the plugins.
export {
  installFromSettings,
  guardAllocatorConfig,
  guardRealm,
  flushGuardStats,
  checkCanaries,
  isGuardAllocatorActive,
  type GuardViolation,
} from './install/install';
export { GuardConfigError, CONFIG_ERROR_EXIT, exitOnConfigError, orExitOnConfigError, runCli, wantsHelp } from './errors';
export { processState } from './run/process-state';
export { SETTINGS, GUARD_MODES, rowsOn, spell, type GuardSettings, type GuardMode, type RunnerName, type RunnerSettingKey, type SettingRow } from './settings/table';
export { parseFlags, RUNNER_FLAGS, type FlagSyntax, type ParsedFlags } from './settings/flags';
export { resolveRunnerSettings, readOptions, checkOptionNames, resolveLayers, type Layer, type RunnerResolution, type RawOptions } from './settings/resolve';
export { readHandoff, HANDOFF_ENV, type Handoff } from './settings/handoff';
export { describeRunnerFlags, flagUsage } from './settings/docs';
export { GUARD_TAGS, GUARD_SKIP_REASONS, GUARD_TAG_DESCRIPTIONS, guardSkipReason, isGuardTag } from './tags';
export { GUARD_INCOMPATIBLE_TAG, GRAPH_CAPTURE_TAG, type GuardTag } from './tags';
export { noteTagSkip } from './run/process-stats';
export { formatTestPath, testPathFile } from './report/test-path';
export { beginGuardedTest, checkGuardedTest, endGuardedTest, takeOutsideDamage, violationError, outsideTestsError } from './run/test-bracket';
export { formatNothingGuarded } from './run/summary';
export { GuardedRun, runExitCode, type RunEnd, type RunVerdict, type CrashAttribution } from './run/lifecycle';
export { runOwnership, runsAlone, type RunOwnership } from './run/owner';
export { endRunAtExit, endRound, type EndOptions } from './run/end';
export { superviseRun, type SupervisedRun } from './run/supervise';
export { reportText } from './report/render';
export { rerunCanaryReports, type RerunGroup, type RerunLauncher } from './run/rerun';
export { NODE_ARGS, watchRequested, withoutWatchAndShards } from './run/runner-args';
export { narrowedReruns, runAsGiven, testNamePattern, testProjects, type RunnerArgs, type RunnerSelection, type SelectionInput } from './run/selection';
export type { RunnerAdapter, RunnerProgram } from './run/runner-adapter';
export { NODE_OPTIONS, NODE_TEST_OPTIONS } from './run/node-options';
export type { OptionKind, OptionRow, RunnerOptions } from './run/runner-options';
export { crashErrorName, crashInFile, workerCrash, crashOutsideTestTitle, crashTest, crashTitles, formatCrashAttribution } from './run/attribution';
export { earlierReports } from './run/earlier';
export { markResultsShown, markTestsStarted, readReportDir, type RunReport } from './run/report-dir';
export { checkRunnerVersion, versionInRange, type RunnerVersionCheck } from './run/runner-version';
export { nodeFlagsToPassOn, runChild, type ChildExit } from './run/child';
export type { ViolationEvent } from './report/event';
