// mate-jest --guard-alloc works with no config change: where the Jest
// config names none of mate-guard's environments, mate-jest supplies one
// that wraps the config's own (node, jsdom, a project's), so DOM tests keep
// their DOM. The wrapped environment's name travels in the workers' env.
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { JestConfigFile } from './jest-config';

export const WRAPPER = path.join(__dirname, '..', 'environment', 'wrapped.js');
const OURS = [path.join(__dirname, '..', 'index.js'), WRAPPER].map((f) => fs.realpathSync(f));
/** Read by the wrapper in each worker (environment/wrapped.ts). */
const WRAPPED_ENV = 'MATE_GUARD_JEST_ENVIRONMENT';

const FLAGS = ['--testEnvironment', '--env'];

/** A `--testEnvironment x` / `--env=x` on the command line, and where it sits. */
function environmentArg(args: readonly string[]): { value: string; at: number; width: number } | undefined {
  for (let i = 0; i < args.length; i++) {
    if (FLAGS.includes(args[i]) && i + 1 < args.length) return { value: args[i + 1], at: i, width: 2 };
    const m = /^--(?:testEnvironment|env)=(.*)$/s.exec(args[i]);
    if (m) return { value: m[1], at: i, width: 1 };
  }
  return undefined;
}

/** The environment as Jest would find it from rootDir: `<rootDir>/x` and relative paths made absolute. */
function located(value: string, rootDir: string): string {
  const v = value.replace(/^<rootDir>/, rootDir);
  return v.startsWith('./') || v.startsWith('../') ? path.resolve(rootDir, v) : v;
}

function isGuardEnvironment(value: string, rootDir: string): boolean {
  if (value === '@mate-guard/jest-env') return true;
  try {
    return OURS.includes(fs.realpathSync(require.resolve(value, { paths: [rootDir] })));
  } catch {
    return false; // `node`, `jsdom`, or not installed: not ours
  }
}

/** Said when the config has projects: each may name its own environment, which one flag cannot wrap. */
export const PROJECTS_NOTE =
  "[mate-guard] note: the Jest config has projects; mate-jest supplies no environment to them (each may have its own): set testEnvironment: '@mate-guard/jest-env' in the projects to guard\n";

/**
 * Jest's arguments (and its workers' environment) with mate-guard's
 * environment supplied where the config or command line names another;
 * `note` says when it could not be.
 */
export function withGuardEnvironment(
  args: readonly string[],
  file: JestConfigFile | undefined,
  env: NodeJS.ProcessEnv,
): { args: string[]; note?: string } {
  const projects = file?.config.projects;
  if (Array.isArray(projects) && projects.length > 0) return { args: [...args], note: PROJECTS_NOTE };
  const base = file?.configPath ? path.dirname(file.configPath) : process.cwd();
  const rootDir = path.resolve(base, typeof file?.config.rootDir === 'string' ? file.config.rootDir : '.');
  const given = environmentArg(args);
  const configured = typeof file?.config.testEnvironment === 'string' ? file.config.testEnvironment : undefined;
  const current = located(given?.value ?? configured ?? 'node', rootDir); // Jest's default is node
  if (isGuardEnvironment(current, rootDir)) return { args: [...args] };
  const out = [...args];
  if (given) out.splice(given.at, given.width);
  env[WRAPPED_ENV] = current;
  return { args: [...out, '--testEnvironment', WRAPPER] };
}
