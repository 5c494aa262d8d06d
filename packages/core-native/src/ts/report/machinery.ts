// What an event records of its writer's machinery (event_origin): the
// packages and directories whose stack frames are the runners', node's
// and mate-guard's, so the one formatter (in the native core) cuts every
// report's JS and Python stacks to the user's frames, whoever renders it.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { type OwnPackage, ownPackages } from '../own-packages';

/** Packages whose frames are machinery whatever the runner, matched as `/node_modules/<name>/`: mate-guard's own and Node's source-map hook. The runners' are their adapters' (package.json `mateGuard.stackRoots`). */
const CORE_STACK_ROOTS: readonly string[] = ['@mate-guard/*', 'source-map-support'];

function realDir(dir: string): string | undefined {
  try {
    return fs.realpathSync(dir) + path.sep;
  } catch {
    return undefined;
  }
}

const coreRoot = path.resolve(__dirname, '..', '..');
const packagesByCwd = new Map<string, string[]>();
const installedByCwd = new Map<string, OwnPackage[]>();

/** mate-guard's packages installed beside core and above `cwd`: one walk per cwd (the stack roots and the drop dirs both read it). */
function installed(cwd: string): OwnPackage[] {
  let found = installedByCwd.get(cwd);
  if (!found) {
    found = ownPackages([coreRoot, cwd]);
    installedByCwd.set(cwd, found);
  }
  return found;
}

/** The runner adapters' stack roots: of the runner packages installed here and above `cwd` (each package's `mateGuard.stackRoots`). */
function adapterStackRoots(cwd: string): string[] {
  return [...new Set(installed(cwd).flatMap((p) => p.stackRoots))];
}

/**
 * The packages whose frames are machinery, as the runner adapters installed
 * here and above `cwd` declare them, and mate-guard's own: recorded in every
 * event (machineryPackages), so a reader drops the frames the writer did.
 */
export function machineryPackages(cwd: string = process.cwd()): string[] {
  const known = packagesByCwd.get(cwd);
  if (known) return known;
  const list = [...new Set([...CORE_STACK_ROOTS, ...adapterStackRoots(cwd)])];
  packagesByCwd.set(cwd, list);
  return list;
}

const defaultDirsByCwd = new Map<string, string[]>();

/**
 * mate-guard's own package directories (found, not listed) and the
 * runners', resolved from `cwd`: each adapter stack root named without `*`,
 * for linked installs (outside any node_modules).
 */
export function defaultDropDirs(cwd: string = process.cwd()): string[] {
  const known = defaultDirsByCwd.get(cwd);
  if (known) return known;
  const dirs = new Set<string>();
  const own = realDir(coreRoot);
  if (own) dirs.add(own);
  for (const p of installed(cwd)) dirs.add(p.dir);
  for (const name of adapterStackRoots(cwd).filter((r) => !r.includes('*'))) {
    for (const from of [coreRoot, cwd]) {
      try {
        const dir = realDir(path.dirname(require.resolve(`${name}/package.json`, { paths: [from] })));
        if (dir) dirs.add(dir);
        break;
      } catch {
        // not installed there
      }
    }
  }
  const list = [...dirs];
  defaultDirsByCwd.set(cwd, list);
  return list;
}
