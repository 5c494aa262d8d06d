// A runner older (or newer) than its package supports would be guarded
// only in part: no test named in reports, hooks that never run. Each
// runner package checks the running runner's version once, with the range
// of its own peerDependencies, and refuses a guarded run outside it in
// one line (a bad setting's exit, 2) rather than degrade in silence.
import { GuardConfigError } from '../errors';

type Version = [number, number, number];

function parse(version: string): Version | undefined {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] : undefined;
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** One comparator of a peer range: `^4.1`, `>=10`, `20`, `*`. */
function matches(version: Version, comparator: string): boolean {
  const c = comparator.trim();
  if (c === '' || c === '*') return true;
  const m = /^(\^|~|>=|>|<=|<|=)?\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(c);
  if (!m) throw new Error(`unsupported version range comparator ${JSON.stringify(c)}`);
  const base: Version = [Number(m[2]), Number(m[3] ?? 0), Number(m[4] ?? 0)];
  const cmp = compare(version, base);
  switch (m[1]) {
    case '>=':
      return cmp >= 0;
    case '>':
      return cmp > 0;
    case '<=':
      return cmp <= 0;
    case '<':
      return cmp < 0;
    case '~':
      return cmp >= 0 && version[0] === base[0] && (m[3] === undefined || version[1] === base[1]);
    case '^':
      // Major 0 is not used by any runner range here: `^` keeps the major.
      return cmp >= 0 && version[0] === base[0];
    default:
      // `=1.2.3` or a bare `20` / `4.1`: the parts given must match.
      return (
        version[0] === base[0] &&
        (m[3] === undefined || version[1] === base[1]) &&
        (m[4] === undefined || version[2] === base[2])
      );
  }
}

/**
 * Whether `version` is in `range`, a peerDependencies range in the subset
 * the runner packages use: `||` of space-separated comparators (`^4.1 ||
 * ^5`, `>=10`, `>=20 <26`). Prerelease tags are ignored (`5.0.0-beta.1` is 5.0.0).
 */
export function versionInRange(version: string, range: string): boolean {
  const v = parse(version);
  if (!v) return false;
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      .split(/\s+/)
      .every((c) => matches(v, c)),
  );
}

export interface RunnerVersionCheck {
  /** The runner as users name it: `mocha`, `jest`, `vitest`, `node`. */
  runner: string;
  /** Its running version; undefined when it cannot be told (nothing is refused then). */
  version: string | undefined;
  /** The range the runner package supports (its peerDependencies). */
  supported: string;
  /** The package that checks: `@mate-guard/mocha`. */
  plugin: string;
  /** What a guarded run would lack outside the range, for the one line. */
  missing: string;
}

/**
 * Throws GuardConfigError (one line, exit 2 wherever it is caught) when the
 * running runner is outside the plugin's range; a version that cannot be
 * read is let through, as a check that guesses would refuse good set-ups.
 */
export function checkRunnerVersion(c: RunnerVersionCheck): void {
  if (c.version === undefined || versionInRange(c.version, c.supported)) return;
  throw new GuardConfigError(
    `${c.runner} ${c.version} is not supported by ${c.plugin} (it needs ${c.runner} ${c.supported}): ${c.missing}; ` +
      `use a supported ${c.runner}, or run it without mate-guard`,
  );
}
