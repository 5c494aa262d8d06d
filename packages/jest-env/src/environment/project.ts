// A Jest project's name in test paths. Jest's `projects` can run the same
// file in two projects; each project's `displayName` tells them apart, as
// Vitest's project names do: `[name] path/to/file > test` (core's
// formatTestPath), in the environment's test paths and in the reporter's
// matching of a crash to its file.
import type { Config } from '@jest/types';
import { formatTestPath } from '@mate-guard/core/internal';

/** `displayName` as Jest normalizes it (`{ name, color }`), or as a config may still spell it (a string). */
export function projectName(displayName: Config.DisplayName | string | undefined): string | undefined {
  const name = typeof displayName === 'string' ? displayName : displayName?.name;
  return name ? name : undefined;
}

/** How the test paths of `testFilePath` under `project` begin: `[project] rel/path`. */
export const testFilePrefix = (testFilePath: string, project: string | undefined): string =>
  formatTestPath(testFilePath, [], project);
