// mate-guard's installed packages, found rather than listed: every
// directory in a node_modules/@mate-guard/ above a starting point (in this
// repository, the workspace links to packages/*). Adding a runner package
// touches no list in core.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface OwnPackage {
  name: string;
  /** The real directory, ending in a separator. */
  dir: string;
  /** Its commands (package.json "bin"). */
  bin: string[];
  /** The packages whose JS frames are its runner's machinery (package.json's `mateGuard.stackRoots`, see run/runner-adapter). */
  stackRoots: string[];
}

interface Manifest {
  name?: unknown;
  bin?: unknown;
  mateGuard?: { stackRoots?: unknown };
}

function readPackage(dir: string): OwnPackage | undefined {
  let real: string;
  let manifest: Manifest;
  try {
    real = fs.realpathSync(dir);
    manifest = JSON.parse(fs.readFileSync(path.join(real, 'package.json'), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
  if (typeof manifest.name !== 'string' || !manifest.name.startsWith('@mate-guard/')) return undefined;
  const bin = typeof manifest.bin === 'object' && manifest.bin !== null ? Object.keys(manifest.bin) : [];
  const roots = manifest.mateGuard?.stackRoots;
  const stackRoots = Array.isArray(roots) ? roots.filter((r): r is string => typeof r === 'string' && r !== '') : [];
  return { name: manifest.name, dir: real + path.sep, bin, stackRoots };
}

/** The @mate-guard packages installed in node_modules above each of `from` (each once, by real directory). */
export function ownPackages(from: readonly string[]): OwnPackage[] {
  const found = new Map<string, OwnPackage>();
  for (const start of from) {
    for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
      const scope = path.join(dir, 'node_modules', '@mate-guard');
      let names: string[] = [];
      try {
        names = fs.readdirSync(scope);
      } catch {
        // none here
      }
      for (const name of names) {
        const p = readPackage(path.join(scope, name));
        if (p && !found.has(p.dir)) found.set(p.dir, p);
      }
      if (path.dirname(dir) === dir) break;
    }
  }
  return [...found.values()];
}
