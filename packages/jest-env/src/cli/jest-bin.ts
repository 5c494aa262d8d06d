// Finds the user's Jest: the project's own first, so its major is used.
import { GuardConfigError } from '@mate-guard/core/internal';

export function resolveJestBin(cwd: string = process.cwd()): string {
  for (const from of [cwd, __dirname]) {
    try {
      return require.resolve('jest/bin/jest', { paths: [from] });
    } catch {
      // try the next place
    }
  }
  throw new GuardConfigError(`cannot find jest from ${cwd}; install it (npm install --save-dev jest) first`);
}
