// Jest's command line as `mate replay` reads it (and mate-jest's canary
// reruns): each option Jest takes, by what its value is. Replay builds
// every argument it passes from this; an option not here runs only under
// --trust-record. Jest's array options (--selectProjects, --roots,
// --reporters) take the words after them: the selection passes a project
// as `--selectProjects=<name>`, and positionals go first.
import type { RunnerOptions } from '@mate-guard/core/internal';

export const options: RunnerOptions = {
  name: 'jest argument',
  positional: 'path',
  rows: [
    [
      'flag',
      `--ci -i --runInBand -b --bail --cache --color --colors --detectOpenHandles --detectLeaks --errorOnDeprecated -e --expand
      --forceExit --injectGlobals --logHeapUsage --noStackTrace --passWithNoTests --randomize --resetMocks --resetModules
      --restoreMocks --clearMocks --runTestsByPath --showSeed --silent --testLocationInResults --useStderr --verbose --watchman
      --workerThreads --coverage --collectCoverage --json`,
    ],
    // Worker count and memory limit stay as given: a failure from worker mode replays in worker mode (a worker memory limit
    // keeps Jest's workers even for one file), dying the same way.
    ['value', `-w --maxWorkers --workerIdleMemoryLimit`],
    [
      'value',
      `-t --testNamePattern --testPathPatterns --testPathPattern --testPathIgnorePatterns --maxConcurrency
      --testTimeout --seed --shard --selectProjects --ignoreProjects --testMatch --testRegex --openHandlesTimeout
      --testFailureExitCode --collectCoverageFrom --coverageProvider`,
    ],
    ['module', '--reporters', 'default summary github-actions'],
    ['module', '--testEnvironment --env', 'node jsdom'],
    // The config is JavaScript Jest runs; --preset names one too.
    ['file', '-c --config'],
    ['path', '--rootDir --roots'],
    // Files and folders Jest writes, or empties (--clearCache, the cache folder).
    ['output', '--outputFile --coverageDirectory --cacheDirectory --clearCache'],
    [
      'code',
      '--preset --setupFiles --setupFilesAfterEnv --globalSetup --globalTeardown --testRunner --testSequencer --transform --resolver --snapshotResolver --watchPlugins --moduleDirectories --modulePaths',
    ],
  ],
};
