// node's own options, as replay judges them (run/runner-options.ts): core
// owns node's command line (a runner's execArgv, node --test), each runner
// package its own.
import type { RunnerOptions } from './runner-options';

const NODE_ROWS: RunnerOptions['rows'] = [
  [
    'flag',
    `--expose-gc --enable-source-maps --no-warnings --trace-warnings --no-deprecation --trace-deprecation --throw-deprecation
    --pending-deprecation --trace-uncaught --trace-exit --abort-on-uncaught-exception --experimental-vm-modules
    --experimental-strip-types --experimental-transform-types --experimental-require-module --experimental-detect-module
    --experimental-import-meta-resolve --experimental-wasm-modules --experimental-test-coverage --experimental-test-module-mocks
    --experimental-test-snapshots --preserve-symlinks --preserve-symlinks-main --zero-fill-buffers --frozen-intrinsics --jitless
    --allow-natives-syntax --use-strict --gc-global --test --test-only --test-force-exit --experimental-fetch
    --experimental-global-navigator --experimental-websocket`,
  ],
  [
    'value',
    `--max-old-space-size --max-semi-space-size --stack-size --stack-trace-limit --unhandled-rejections --conditions -C
    --experimental-default-type --disable-warning --title --dns-result-order --test-name-pattern --test-skip-pattern --test-timeout
    --test-concurrency --test-isolation --test-shard --test-coverage-include --test-coverage-exclude --test-coverage-branches
    --test-coverage-functions --test-coverage-lines`,
  ],
  ['module', '--require -r --import --loader --experimental-loader'],
  ['module', '--test-reporter', 'spec tap dot junit lcov'],
  ['output', '--test-reporter-destination', 'stdout stderr'],
  ['file', '--env-file --env-file-if-exists'],
  ['code', '-e --eval -p --print --run --snapshot-blob'],
  [
    'debugger',
    '-i --interactive --inspect --inspect-brk --inspect-wait --debug --debug-brk --inspect-port= --debug-port= --inspect-publish-uid=',
  ],
];

/** node's options before its script (a runner's execArgv). */
export const NODE_OPTIONS: RunnerOptions = {
  name: 'Node option',
  rows: NODE_ROWS,
  positional: 'none',
  optionsFirst: true,
};

/** `node --test [options] [files]`: the arguments are node's options, then test files. */
export const NODE_TEST_OPTIONS: RunnerOptions = {
  name: 'node --test argument',
  rows: NODE_ROWS,
  positional: 'spec',
  optionsFirst: true,
};
