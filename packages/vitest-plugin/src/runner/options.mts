// Vitest's command line as `mate replay` reads it (and mate-vitest's
// canary reruns): each option Vitest takes, by what its value is. Replay
// builds every argument it passes from this; an option not here runs only
// under --trust-record. The selection passes a project as
// `--project=<name>`, never as a word of its own.
import type { RunnerOptions } from '@mate-guard/core/internal';

export const options: RunnerOptions = {
  name: 'vitest argument',
  positional: 'path',
  rows: [
    [
      'flag',
      `--run --passWithNoTests --allowOnly --globals --dom --isolate --fileParallelism --coverage --coverage.enabled --silent
      --hideSkippedTests --printConsoleTrace --logHeapUsage --clearScreen --expandSnapshotDiff --includeTaskLocation --standalone
      --color --typecheck --sequence.shuffle --sequence.concurrent --dangerouslyIgnoreUnhandledErrors`,
    ],
    // Worker count, pool and memory limit stay as given: a failure from worker mode replays in worker mode.
    ['value', `--maxWorkers --minWorkers --vmMemoryLimit`],
    [
      'value',
      `-t --testNamePattern --bail --retry --testTimeout --hookTimeout --teardownTimeout
      --maxConcurrency --shard --project --exclude --mode --sequence.seed --sequence.hooks --sequence.setupFiles --configLoader
      --slowTestThreshold`,
    ],
    [
      'module',
      '--reporter',
      'default basic verbose dot json junit tap tap-flat hanging-process github-actions blob tree',
    ],
    ['module', '--environment', 'node jsdom happy-dom edge-runtime'],
    ['module', '--pool', 'threads forks vmThreads vmForks'],
    ['path', '--dir -r --root'],
    ['output', '--outputFile --outputFile.*'],
    // The config is JavaScript Vitest runs.
    ['file', '-c --config'],
    ['node', '--execArgv'],
    ['code', '--setupFiles --globalSetup --api --ui --browser --workspace'],
    ['debugger', '--inspect --inspectBrk --inspect-brk'],
  ],
};
