// mate-jest adds @mate-guard/jest-env/reporter to the user's reporters:
// Jest takes reporters from the command line (names only, replacing the
// config's) or from the config (names with options). So: the command
// line's `--reporters` plus ours; else the config's reporters as names
// plus ours; else (reporters with options) the config itself, read with
// Jest's own reader, passed back as `--config <json>` with ours added.
import * as path from 'node:path';

import { configArg, readJestConfig } from './jest-config';

export const REPORTER = path.join(__dirname, '..', 'reporter', 'reporter.js');

type ReporterEntry = string | [string, unknown];

const isOurs = (r: ReporterEntry) => {
  const name = Array.isArray(r) ? r[0] : r;
  return name === '@mate-guard/jest-env/reporter' || name === REPORTER;
};

/** Plain data only: what survives `--config <json>` unchanged. */
function isPlainData(value: unknown): boolean {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return true;
  if (Array.isArray(value)) return value.every(isPlainData);
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.values(value as Record<string, unknown>).every((v) => v === undefined || isPlainData(v));
  }
  return false;
}

/**
 * Jest's arguments with the reporter added, or a note saying why it could
 * not be (mate-jest still prints the summary and names crashed tests).
 */
export async function withGuardReporter(
  args: readonly string[],
  jestBin: string,
): Promise<{ args: string[]; note?: string }> {
  const out = [...args];
  const onCommandLine = out.some((a) => a === '--reporters' || a.startsWith('--reporters='));
  if (onCommandLine) return { args: [...out, '--reporters', REPORTER] };
  const given = configArg(out);
  const config = (await readJestConfig(out, jestBin))?.config;
  const reporters = config?.reporters as ReporterEntry[] | undefined;
  // Last on the line: `--reporters` takes every word after it (a test path pattern too).
  if (!Array.isArray(reporters)) return { args: [...out, '--reporters', REPORTER, '--reporters', 'default'] };
  if (reporters.some(isOurs)) return { args: out };
  if (reporters.every((r) => typeof r === 'string')) {
    return { args: [...out, '--reporters', REPORTER, ...reporters.flatMap((r) => ['--reporters', r as string])] };
  }
  if (config && isPlainData(config)) {
    const json = JSON.stringify({ ...config, reporters: [REPORTER, ...reporters] });
    if (given) out.splice(given.at, given.width);
    return { args: ['--config', json, ...out] };
  }
  return {
    args: out,
    note: "[mate-guard] note: add '@mate-guard/jest-env/reporter' to reporters in your Jest config for crashed tests in reporters' output (mate-jest cannot add it to a config that is not plain data)",
  };
}
