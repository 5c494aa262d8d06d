// Finding Vitest's own CLI builder. `createCLI` is not a public export of
// vitest 4 (only of its bin), so it is looked up where the bin imports it
// from; a later Vitest that exports it from 'vitest/node' is used directly.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The part of CAC's interface that mate-vitest uses. */
interface CacLike {
  option(rawName: string, description: string): unknown;
  parse(argv?: string[]): unknown;
}

type CreateCLI = () => CacLike;

function vitestDir(from: string): string {
  const require = createRequire(from);
  return path.dirname(require.resolve('vitest/package.json', { paths: [process.cwd(), from] }));
}

export async function loadCreateCLI(from: string): Promise<CreateCLI | undefined> {
  const dir = vitestDir(from);
  const nodeApi = (await import(pathToFileURL(path.join(dir, 'dist', 'node.js')).href)) as { createCLI?: CreateCLI };
  if (typeof nodeApi.createCLI === 'function') return nodeApi.createCLI;
  // vitest 4: dist/cli.js is `import { c as createCLI } from './chunks/cac.<hash>.js'; createCLI().parse();`
  const bin = fs.readFileSync(path.join(dir, 'dist', 'cli.js'), 'utf8');
  const m = /import\s*\{\s*(\w+)\s+as\s+createCLI\s*\}\s*from\s*['"](\.\/chunks\/[^'"]+)['"]/.exec(bin);
  if (!m) return undefined;
  const chunk = (await import(pathToFileURL(path.join(dir, 'dist', m[2])).href)) as Record<string, unknown>;
  const fn = chunk[m[1]];
  return typeof fn === 'function' ? (fn as CreateCLI) : undefined;
}

/** Vitest's bin, for the fallback where no CLI builder was found. */
export function vitestBin(from: string): string {
  return path.join(vitestDir(from), 'vitest.mjs');
}
