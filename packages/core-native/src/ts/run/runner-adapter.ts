// The runner contract: what core needs to know of a test runner, said by
// the runner's own package, never by core. A package adapts a runner by
// declaring `"mateGuard": { "runner": "<name>" }` in its package.json and
// exporting, as `./adapter`, an `adapter` object of this interface: how it
// selects tests (reruns, replay), how its command line reads (the option
// description replay's trust check judges by), the programs a run of it
// starts in, the column its README's settings table has for its config.
// Its stack roots (the packages whose JS frames are the runner's machinery,
// dropped from reports) are `"mateGuard": { "stackRoots": [...] }` beside
// `runner`, read without loading the adapter (own-packages.ts): every
// guarded process reads them as it installs, synchronously.
// Core finds adapters among the installed @mate-guard packages
// and keeps no list of runners: adding a runner touches no core file.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

import { GuardConfigError } from '../errors';
import type { ConfigColumn } from '../settings/docs';
import type { OptionSpelling } from '../settings/resolve';
import { ownInstall } from './replay-entry';
import type { RunnerOptions } from './runner-options';
import type { RunnerSelection } from './selection';

/** A program a run of the runner may start in: a mate-* CLI, the runner's own bin. */
export interface RunnerProgram {
  /** The package that installs it. */
  pkg: string;
  /** Its bin name in that package. */
  bin: string;
  /** Other scripts of the package a run can start in (mocha's bin forks lib/cli/cli.js for node flags). */
  also?: RegExp;
}

/** One runner, as its package adapts it for core. */
export interface RunnerAdapter extends RunnerSelection {
  /** The package that owns the adapter (and the runner's mate-* CLI). */
  package: string;
  /** The programs a recorded run may name as its script, the package's mate-* CLI first. */
  programs: readonly RunnerProgram[];
  /**
   * A run node itself starts (`node --test --require <package> files...`):
   * when the recorded node options hold `flag`, the run has no script of
   * its own and its arguments read as `options` say (node's).
   */
  nodeEntry?: { flag: string; options: RunnerOptions };
  /** How the runner's config (its options object) spells a setting; none without a config of its own. */
  spelling?: OptionSpelling;
  /** Where the runner's config names a setting: the column of its package README's settings table (`mate options --runner`) and of the main README's combined table (`mate options`); none without a config of its own. */
  configColumn?: ConfigColumn;
}

const SCOPE = '@mate-guard';

interface Found {
  runner: string;
  /** The adapter's file, as the package exports it. */
  file: string;
}

/** The adapter a package directory declares, or undefined. */
function declared(dir: string): Found | undefined {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      mateGuard?: { runner?: unknown };
      exports?: Record<string, unknown>;
    };
    const runner = pkg.mateGuard?.runner;
    const entry = pkg.exports?.['./adapter'];
    const rel = typeof entry === 'string' ? entry : (entry as { default?: unknown } | undefined)?.default;
    if (typeof runner !== 'string' || typeof rel !== 'string') return undefined;
    const file = path.join(dir, rel);
    // A package's adapter is its own file, never one a link or `..` takes elsewhere.
    if (path.relative(fs.realpathSync(dir), fs.realpathSync(file)).startsWith('..')) return undefined;
    return { runner, file };
  } catch {
    return undefined;
  }
}

/**
 * The adapters installed where node would find packages from `from`: the
 * @mate-guard packages in node_modules of `from` and each folder above it,
 * up to `stop` (nearest first, as node resolves).
 */
function installed(from: string, stop: string): Found[] {
  const out: Found[] = [];
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const scope = path.join(dir, 'node_modules', SCOPE);
    let names: string[] = [];
    try {
      names = fs.readdirSync(scope).sort();
    } catch {
      // no scope here
    }
    for (const name of names) {
      const found = declared(path.join(scope, name));
      if (found && !out.some((f) => f.runner === found.runner)) out.push(found);
    }
    if (path.dirname(dir) === dir || dir === path.resolve(stop)) return out;
  }
}

/** Where adapters are looked for: the checkout's own node_modules (from `cwd` up to `root`, never above it), then next to this mate. */
const places = (cwd: string, root: string): [string, string][] => [
  [cwd, root],
  [__dirname, ownInstall()],
];

/** The runners the installed packages adapt, each once, in the order they are looked for. */
export function installedRunners(cwd: string, root: string): string[] {
  const names: string[] = [];
  for (const [from, stop] of places(cwd, root))
    for (const f of installed(from, stop)) if (!names.includes(f.runner)) names.push(f.runner);
  return names;
}

/** The file of the adapter for `runner`, found without loading anything; undefined when no installed package adapts it. */
export function findAdapter(runner: string, cwd: string, root: string): string | undefined {
  for (const [from, stop] of places(cwd, root)) {
    const hit = installed(from, stop).find((f) => f.runner === runner);
    if (hit) return hit.file;
  }
  return undefined;
}

/** Loads the adapter `file` (findAdapter's) for `runner`. */
export async function loadAdapter(runner: string, file: string): Promise<RunnerAdapter> {
  const mod = (await import(pathToFileURL(file).href)) as {
    adapter?: RunnerAdapter;
    default?: { adapter?: RunnerAdapter };
  };
  const adapter = mod.adapter ?? mod.default?.adapter;
  if (adapter?.runner !== runner || !Array.isArray(adapter.programs) || typeof adapter.select !== 'function') {
    throw new GuardConfigError(
      `${file} declares the ${runner} runner's adapter but exports none (an adapter with runner "${runner}", its programs and select)`,
    );
  }
  return adapter;
}
