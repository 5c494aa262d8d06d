// Published packages carry source maps with their sources inlined
// (tsconfig.base.json: inlineSources), because the TypeScript sources are
// not in the tarballs: before, Vite printed `Sourcemap for ".../setup.mjs"
// points to missing source files` in every user's guarded Vitest run.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';

import { ROOT, run } from './helpers/run.mjs';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-maps-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** What `npm pack` puts in each published package: [{ name, dir, files }]. */
async function packed() {
  const r = await run(npm, ['pack', '--dry-run', '--json', '--ignore-scripts', '--workspaces'], { cwd: ROOT });
  assert.equal(r.code, 0, r.output);
  const dirs = new Map();
  for (const ws of JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).workspaces) {
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, ws, 'package.json'), 'utf8'));
    if (!manifest.private) dirs.set(manifest.name, path.join(ROOT, ws));
  }
  const packages = JSON.parse(r.stdout)
    .filter((p) => dirs.has(p.name))
    .map((p) => ({ name: p.name, dir: dirs.get(p.name), files: p.files.map((f) => f.path) }));
  assert.ok(
    packages.some((p) => p.name === '@mate-guard/vitest'),
    `the published packages: ${packages.map((p) => p.name)}`,
  );
  return packages;
}

test('every source map a package ships holds the text of each of its sources', async () => {
  let maps = 0;
  for (const pkg of await packed()) {
    for (const file of pkg.files.filter((f) => f.endsWith('.map'))) {
      const map = JSON.parse(fs.readFileSync(path.join(pkg.dir, file), 'utf8'));
      const content = map.sourcesContent ?? [];
      assert.ok(map.sources.length > 0, `${pkg.name}/${file} names its sources`);
      map.sources.forEach((source, i) => {
        assert.equal(
          typeof content[i],
          'string',
          `${pkg.name}/${file}: no text for ${source} (inlineSources in tsconfig.base.json)`,
        );
      });
      maps++;
    }
  }
  assert.ok(maps > 0, 'the packages ship source maps (else this checks nothing: drop the test with them)');
});

test('a guarded Vitest run with the plugin as published prints no source map warning', async () => {
  // A project whose @mate-guard/vitest holds exactly the packed files (no src/).
  const pkg = (await packed()).find((p) => p.name === '@mate-guard/vitest');
  const project = path.join(tmp, 'project');
  const plugin = path.join(project, 'node_modules', '@mate-guard', 'vitest');
  for (const file of pkg.files) {
    fs.mkdirSync(path.dirname(path.join(plugin, file)), { recursive: true });
    fs.copyFileSync(path.join(pkg.dir, file), path.join(plugin, file));
  }
  assert.ok(!fs.existsSync(path.join(plugin, 'src')), 'the TypeScript sources are not published');
  fs.symlinkSync(path.join(ROOT, 'packages', 'core-native'), path.join(project, 'node_modules', '@mate-guard', 'core'));
  fs.symlinkSync(path.join(ROOT, 'node_modules', 'vitest'), path.join(project, 'node_modules', 'vitest'));
  fs.writeFileSync(
    path.join(project, 'vitest.config.mjs'),
    "import guardAlloc from '@mate-guard/vitest';\nexport default { plugins: [guardAlloc()] };\n",
  );
  fs.writeFileSync(
    path.join(project, 'buffers.test.mjs'),
    "import { expect, test } from 'vitest';\ntest('a guarded buffer', () => { expect(Buffer.alloc(8).length).toBe(8); });\n",
  );

  const r = await run(process.execPath, [path.join(project, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], {
    cwd: project,
    env: { MATE_VITEST_GUARD_ALLOC: '1' },
  });
  assert.equal(r.code, 0, r.output);
  assert.match(r.output, /^\[mate-guard\] summary: [1-9]\d* allocations? guarded/m, 'guarding was on');
  assert.doesNotMatch(r.output, /Sourcemap|missing source/i);
});
