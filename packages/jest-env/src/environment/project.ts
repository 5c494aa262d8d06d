// A Jest project's name in test paths. Jest's `projects` can run the same
// file in two projects; each project's `displayName` tells them apart, as
// Vitest's project names do: `[name] path/to/file > test` (core's
// formatTestPath), in the environment's test paths and in the reporter's
// matching of a crash to its file.
import type { TestResult } from '@jest/test-result';
import type { Config } from '@jest/types';
import { formatTestPath } from '@mate-guard/core/internal';

/** `displayName` as Jest normalizes it (`{ name, color }`), or as a config may still spell it (a string). */
export function projectName(displayName: Config.DisplayName | string | undefined): string | undefined {
  const name = typeof displayName === 'string' ? displayName : displayName?.name;
  return name ? name : undefined;
}

/** The project of a file's results, as the environment put it in its test paths. */
export const projectOfResult = (testResult: TestResult): string | undefined => projectName(testResult.displayName);

/** How the test paths of `testFilePath` under `project` begin: `[project] rel/path`. */
export const testFilePrefix = (testFilePath: string, project: string | undefined): string => formatTestPath(testFilePath, [], project);
