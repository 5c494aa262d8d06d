// A test's path as reports spell it, written and read in one place:
// `<file> > <suite> > <test>`, with `[project] ` in front where the runner's
// project has a name.
import * as path from 'node:path';

/**
 * `<file> > <suite> > <test>`, the file relative to the working directory;
 * `[project] <file> > …` when the runner's project has a name (Vitest's own
 * spelling in `vitest list`): one file can run in several projects.
 */
export function formatTestPath(file: string | undefined, titles: readonly string[], project?: string): string {
  const parts = titles.filter((t) => t.length > 0);
  if (file) parts.unshift(path.isAbsolute(file) ? path.relative(process.cwd(), file) || file : file);
  const joined = parts.join(' > ');
  return project ? `[${project}] ${joined}` : joined;
}

export const PROJECT_PREFIX = /^\[([^\]]+)\] /;

/** The file a test path names, without its project: `[b] x.test.ts > t` -> `x.test.ts`. */
export function testPathFile(testPath: string): string {
  return testPath.replace(PROJECT_PREFIX, '').split(' > ')[0];
}
