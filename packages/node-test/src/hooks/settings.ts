// node:test's side of core's one resolver: flag (mate-node-test only: node
// rejects unknown flags) > MATE_NODE_TEST_GUARD_* > off.
import { parseFlags, resolveRunnerSettings, RUNNER_FLAGS, type RunnerResolution } from '@mate-guard/core/internal';

export interface NodeTestGuardConfig extends RunnerResolution {
  /** The arguments without the guard flags. */
  rest: string[];
}

export function resolveNodeTestConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): NodeTestGuardConfig {
  const { values, rest } = parseFlags(argv, RUNNER_FLAGS);
  return { ...resolveRunnerSettings({ runner: 'node-test', flags: values, env }), rest };
}

/** The one line a run that guarded nothing ends with: how to load the guard. */
export const NOTHING_GUARDED_FIX =
  'preload it with `node --test --require @mate-guard/node-test` (or run mate-node-test)';

/** The same under mate-node-test, which preloads it already: what can still keep a test file unguarded. */
export const NOTHING_GUARDED_UNDER_CLI =
  "node --test started test files, but none of their processes loaded @mate-guard/node-test (mate-node-test passes it with --require: a NODE_OPTIONS or execArgv that the files' processes do not inherit drops it)";
