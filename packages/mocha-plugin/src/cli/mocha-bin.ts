// Finding the user's Mocha executable (the project's, else the one next to us).
import * as path from 'node:path';

export function findMochaBin(cwd: string = process.cwd()): string | undefined {
  for (const base of [cwd, path.join(__dirname, '..', '..')]) {
    try {
      return require.resolve('mocha/bin/mocha.js', { paths: [base] });
    } catch {
      // try the next place
    }
  }
  return undefined;
}

/** The plugin's entry point, to hand to mocha as --require. */
export const PLUGIN_ENTRY = path.join(__dirname, '..', 'index.js');
