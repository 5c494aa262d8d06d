// Which process of a node:test run this is.

/**
 * - `main`: node --test's main process; each test file runs in a child.
 * - `child`: a test file's process (node --test sets NODE_TEST_CONTEXT).
 * - `inline`: tests run in this process: `node --test
 *   --experimental-test-isolation=none` (Node >= 22.8), or a test file run
 *   directly (`node --import @mate-guard/node-test file.test.mjs`).
 */
export type NodeTestRole = 'main' | 'child' | 'inline';

export function nodeTestRole(
  env: NodeJS.ProcessEnv = process.env,
  execArgv: readonly string[] = process.execArgv,
): NodeTestRole {
  if (env.NODE_TEST_CONTEXT) return 'child';
  if (!execArgv.includes('--test')) return 'inline';
  const isolation = execArgv.findIndex(
    (a) => a === '--experimental-test-isolation' || a.startsWith('--experimental-test-isolation='),
  );
  const value =
    isolation < 0
      ? undefined
      : execArgv[isolation].includes('=')
        ? execArgv[isolation].split('=')[1]
        : execArgv[isolation + 1];
  return value === 'none' ? 'inline' : 'main';
}

/** Whether this process runs the test files itself (not node --test's main process). */
export const runsTests = (role: NodeTestRole) => role !== 'main';

/** The test file this process runs: node --test starts each child as `node [execArgv] <file>`. */
export function ownFile(): string | undefined {
  return process.argv[1];
}
