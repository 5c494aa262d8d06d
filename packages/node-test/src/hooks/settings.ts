// node:test's side of core's one resolver: flag (mate-node-test only: node
// rejects unknown flags) > MATE_NODE_TEST_GUARD_* > off.
import { parseFlags, resolveRunnerSettings, RUNNER_FLAGS, type RunnerResolution } from '@mate-guard/core/internal';

export interface NodeTestGuardConfig extends RunnerResolution {
  /** The arguments without the guard flags. */
  rest: string[];
}

export function resolveNodeTestConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): NodeTestGuardConfig {
  const { values, rest } = parseFlags(argv, RUNNER_FLAGS);
  return { ...resolveRunnerSettings({ runner: 'node-test', flags: values, env }), rest };
}

/** The one line a run that guarded nothing ends with: how to load the guard. */
export const NOTHING_GUARDED_FIX =
  'preload it with `node --test --require @mate-guard/node-test` (or run mate-node-test)';
