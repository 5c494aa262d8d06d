// The environment mate-jest supplies when the Jest config names none of
// mate-guard's: the config's own environment (node, jsdom, a project's),
// named in MATE_GUARD_JEST_ENVIRONMENT by mate-jest, with guarding added.
import * as path from 'node:path';

import { guardEnvironmentOf, type EnvironmentClass } from './environment';

/** Set by mate-jest for its workers (see cli/environment.ts). */
const WRAPPED_ENV = 'MATE_GUARD_JEST_ENVIRONMENT';

/** Jest's own lookup: `jsdom` is jest-environment-jsdom; anything else a package or a file. */
function resolveEnvironment(name: string): string {
  const from = { paths: [process.cwd(), path.join(__dirname, '..', '..')] };
  for (const candidate of [`jest-environment-${name}`, name]) {
    try {
      return require.resolve(candidate, from);
    } catch {
      // try the next spelling
    }
  }
  throw new Error(
    `mate-jest: cannot load the Jest config's testEnvironment ${JSON.stringify(name)} to add guarding to it` +
      (name === 'jsdom' ? ' (npm install --save-dev jest-environment-jsdom)' : ''),
  );
}

function innerEnvironment(): EnvironmentClass {
  const name = process.env[WRAPPED_ENV] || 'node';
  const mod = require(resolveEnvironment(name)) as {
    default?: EnvironmentClass;
    TestEnvironment?: EnvironmentClass;
  } & EnvironmentClass;
  return mod.TestEnvironment ?? mod.default ?? mod;
}

const Wrapped = guardEnvironmentOf(innerEnvironment());
export = Wrapped;
