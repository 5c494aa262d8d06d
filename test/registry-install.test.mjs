// Installed as a user installs it: every package packed (`npm pack`, which
// puts the prebuilt binaries in @mate-guard/core), published to a real
// registry (Verdaccio) on the loopback, then installed into a fresh project
// outside the checkout with the README's commands, on a PATH with no
// compiler, cmake or make. Under every runner and CLI, a one-byte overflow
// by a prebuilt addon is caught and reported. Then the bad inputs (a
// corrupt binary, one that needs a newer glibc) and the source build from
// the tarball alone (`mate build-native`).
//
// No outside network: the registry has no uplinks and holds, besides
// mate-guard, exactly the third-party versions of this repository's lock
// (vitest, jest, mocha and cmake-js with everything they need), their
// tarballs taken from the npm cache that `npm install` in this checkout
// filled; npm in the project uses an empty cache of its own and a proxy that
// refuses every connection that is not to 127.0.0.1.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';

import { lockClosure, npmCacheContent, seedStorage, startRegistry, writeFiles } from './helpers/registry.mjs';
import { ROOT, run } from './helpers/run.mjs';

const PACKAGES = [
  '@mate-guard/core',
  '@mate-guard/vitest',
  '@mate-guard/jest-env',
  '@mate-guard/mocha',
  '@mate-guard/node-test',
];
const BUGGY_ADDON = path.join(ROOT, 'examples', 'addon', 'build', 'Release', 'buggy_addon.node');

/** The user's project: an addon with a planted bug, a test for each runner, the runners' configs. */
const FIXTURES = {
  'addon/index.js': "module.exports = require('./buggy_addon.node');\n",
  'scripts/overflow.js': [
    "const addon = require('../addon');",
    'const buf = Buffer.alloc(64);',
    'addon.fillInclusive(buf); // writes buf[64]',
    "console.log('not reached under mate-guard');",
    '',
  ].join('\n'),
  'vitest.config.mjs': [
    "import { defineConfig } from 'vitest/config';",
    "import guardAlloc from '@mate-guard/vitest';",
    '',
    "export default defineConfig({ plugins: [guardAlloc()], test: { include: ['vitest/*.test.mjs'] } });",
    '',
  ].join('\n'),
  'vitest/overflow.test.mjs': [
    "import { createRequire } from 'node:module';",
    "import { test } from 'vitest';",
    '',
    "const addon = createRequire(import.meta.url)('../addon');",
    "test('fills a 64-byte buffer', () => {",
    '  addon.fillInclusive(Buffer.alloc(64));',
    '});',
    '',
  ].join('\n'),
  'jest.config.js': [
    'module.exports = {',
    "  testEnvironment: '@mate-guard/jest-env',",
    "  reporters: ['default', '@mate-guard/jest-env/reporter'],",
    "  testMatch: ['<rootDir>/jest/*.test.js'],",
    '};',
    '',
  ].join('\n'),
  'jest/overflow.test.js': [
    "const addon = require('../addon');",
    "test('fills a 64-byte buffer', () => {",
    '  addon.fillInclusive(Buffer.alloc(64));',
    '});',
    '',
  ].join('\n'),
  'mocha/overflow.spec.cjs': [
    "const addon = require('../addon');",
    "describe('overflow', () => {",
    "  it('fills a 64-byte buffer', () => {",
    '    addon.fillInclusive(Buffer.alloc(64));',
    '  });',
    '});',
    '',
  ].join('\n'),
  'node-test/overflow.test.mjs': [
    "import { createRequire } from 'node:module';",
    "import { test } from 'node:test';",
    '',
    "const addon = createRequire(import.meta.url)('../addon');",
    "test('fills a 64-byte buffer', () => {",
    '  addon.fillInclusive(Buffer.alloc(64));',
    '});',
    '',
  ].join('\n'),
};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-registry-'));
const project = path.join(tmp, 'project');
const pnpmProject = path.join(tmp, 'pnpm-project');
const jest29Project = path.join(tmp, 'jest-29-project');
const PNPM = path.join(ROOT, 'node_modules', 'pnpm', 'bin', 'pnpm.cjs');
const core = path.join(project, 'node_modules', '@mate-guard', 'core');
// node, npm, npx, pnpm, sh and what package managers' bin scripts use
// (dirname, sed, uname): no compiler, cmake or make.
const bareBin = path.join(tmp, 'bin');
let registry;

/**
 * Runs `cmd` as a user's shell would on a machine without build tools: PATH
 * is the bare one (or `opts.env.PATH`), and none of this test's own
 * variables (npm's npm_*, node --test's, MATE_*) is passed on.
 */
function runUser(cmd, args, opts = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(npm_|MATE_|NODE_TEST_CONTEXT$|NODE_OPTIONS$)/.test(k)) env[k] = v;
  Object.assign(env, { PATH: bareBin, CI: 'true', FORCE_COLOR: '0', NO_COLOR: '1' }, opts.env ?? {});
  const timeout = opts.timeout ?? 240_000;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? project, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

const npm = (args, opts) => runUser('npm', args, opts);
const bin = (name) => path.join(project, 'node_modules', '.bin', name);

before(async () => {
  fs.mkdirSync(bareBin);
  const npmCli = fs.realpathSync(spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim());
  fs.symlinkSync(process.execPath, path.join(bareBin, 'node'));
  fs.symlinkSync(npmCli, path.join(bareBin, 'npm'));
  fs.symlinkSync(path.join(path.dirname(npmCli), 'npx-cli.js'), path.join(bareBin, 'npx'));
  fs.symlinkSync(PNPM, path.join(bareBin, 'pnpm'));
  for (const tool of ['sh', 'dirname', 'sed', 'uname']) {
    const at = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
    fs.symlinkSync(at, path.join(bareBin, tool));
  }

  // The third-party packages, from the npm cache this checkout's install filled.
  const rootLock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
  const wanted = ['vitest', 'jest', 'jest-environment-node', 'mocha'].map((name) => ({ from: '', name }));
  const coreDeps = Object.keys(
    JSON.parse(fs.readFileSync(path.join(ROOT, 'packages', 'core-native', 'package.json'), 'utf8')).dependencies,
  );
  for (const name of coreDeps) wanted.push({ from: 'packages/core-native', name });
  // Jest 29, the floor of @mate-guard/jest-env's peer range (test/fixtures/jest-29 installs it).
  wanted.push({ from: 'test/fixtures/jest-29', name: 'jest' });
  const cache = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).stdout.trim();
  const missing = seedStorage(
    path.join(tmp, 'registry', 'storage'),
    lockClosure(rootLock, wanted),
    npmCacheContent(cache),
  );
  assert.deepEqual(missing, [], `tarballs missing from the npm cache ${cache}: run npm install in the checkout first`);
  registry = await startRegistry(path.join(tmp, 'registry'));

  // Our packages: packed from the checkout, published with a registry user's token.
  const tarballs = path.join(tmp, 'tarballs');
  fs.mkdirSync(tarballs);
  for (const name of PACKAGES) {
    const r = await run('npm', ['pack', '-w', name, '--pack-destination', tarballs]);
    assert.equal(r.code, 0, r.output);
  }
  const publishRc = path.join(tmp, 'publish.npmrc');
  fs.writeFileSync(publishRc, `//127.0.0.1:${new URL(registry.url).port}/:_authToken=${registry.token}\n`);
  for (const file of fs.readdirSync(tarballs)) {
    const r = await run('npm', [
      'publish',
      path.join(tarballs, file),
      '--registry',
      registry.url,
      '--userconfig',
      publishRc,
    ]);
    assert.equal(r.code, 0, r.output);
  }

  // The project's npm settings (pnpm reads them too): the test registry for
  // everything, and a proxy that refuses any other connection.
  const npmrc = [
    `registry=${registry.url}`,
    'proxy=http://127.0.0.1:9/',
    'https-proxy=http://127.0.0.1:9/',
    'noproxy=127.0.0.1',
    'fetch-retries=0',
    'omit-lockfile-registry-resolved=false',
    `cache=${path.join(tmp, 'npm-cache')}`,
    'audit=false',
    'fund=false',
    'update-notifier=false',
    '',
  ].join('\n');
  const names = { [project]: 'a-user-project', [pnpmProject]: 'a-pnpm-project', [jest29Project]: 'a-jest-29-project' };
  for (const [dir, name] of Object.entries(names)) {
    writeFiles(dir, {
      ...FIXTURES,
      'package.json': `${JSON.stringify({ name, version: '1.0.0', private: true }, null, 2)}\n`,
      '.npmrc': npmrc,
    });
  }
  // A prebuilt addon with a planted bug (built by this checkout's npm install): copied, not compiled.
  assert.ok(fs.existsSync(BUGGY_ADDON), `${BUGGY_ADDON} is missing: run npm install first`);
  for (const dir of Object.keys(names)) fs.copyFileSync(BUGGY_ADDON, path.join(dir, 'addon', 'buggy_addon.node'));
});

after(async () => {
  await registry?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

// The README's install commands, one per runner.
const INSTALLS = [
  ['@mate-guard/vitest', 'vitest'],
  ['@mate-guard/jest-env', 'jest'],
  ['@mate-guard/mocha', 'mocha'],
  ['@mate-guard/node-test'],
];

test('npm install -D of each plugin resolves from the registry, with no peer warning and no build tools', async () => {
  const tools = await runUser('sh', ['-c', 'command -v cmake c++ g++ gcc clang++ make ninja; true']);
  assert.equal(tools.output, '', 'the bare PATH has build tools');
  for (const args of INSTALLS) {
    const r = await npm(['install', '-D', ...args]);
    assert.equal(r.code, 0, r.output);
    assert.doesNotMatch(r.output, /peer|ERESOLVE/i, `npm install -D ${args.join(' ')}: peer warnings`);
    // No install script (pnpm refuses unapproved ones, npm warns): the prebuilt binary needs none.
    assert.doesNotMatch(
      r.output,
      /install-scripts +@mate-guard/,
      `npm warned about an install script of ours:\n${r.output}`,
    );
  }
  const resolved = JSON.parse(fs.readFileSync(path.join(project, 'package-lock.json'), 'utf8')).packages;
  for (const name of PACKAGES) {
    const entry = resolved[`node_modules/${name}`];
    assert.ok(entry, `${name} is not installed`);
    assert.ok(entry.resolved.startsWith(registry.url), `${name} came from ${entry.resolved}, not the test registry`);
  }
  // What a source build and `mate guard-run --device cuda` need is in the package.
  for (const rel of [
    'prebuilds/linux-x64/mate_guard.node',
    'prebuilds/linux-x64/libmate_guard_cuda.so',
    'prebuilds/linux-x64/mate-guard-print',
    'prebuilds/linux-x64/manifest.json',
    'include/mate_guard.h',
    'python/sitecustomize.py',
    'python/mate_guard_cuda.py',
    'CMakeLists.txt',
    'src/native/device/embed/standalone.cc',
  ])
    assert.ok(fs.existsSync(path.join(core, rel)), `@mate-guard/core lacks ${rel}`);
  assert.ok(
    !fs.existsSync(path.join(core, 'build')),
    'the core was built from source although its prebuilt binary fits',
  );
  const check = await runUser(bin('mate'), ['build-native']);
  assert.equal(check.code, 0, check.output);
  assert.equal(
    check.output,
    'mate build-native: prebuilds/linux-x64/mate_guard.node fits this machine and loads: nothing to build\n',
  );
  const manifest = JSON.parse(fs.readFileSync(path.join(core, 'prebuilds/linux-x64/manifest.json'), 'utf8'));
  assert.match(manifest.glibc, /^2\.\d+$/);
});

/** The overflow report, the test's name and the summary in `output` of a run that `exited` as expected. */
function assertCaught(r, testName, { summary = true } = {}) {
  assert.notEqual(r.code, 0, r.output);
  assert.match(
    r.output,
    /==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)/,
    r.output,
  );
  assert.match(r.output, /#0 FillInclusive \(buggy_addon\.node\+0x[0-9a-f]+\)/, r.output);
  if (testName) assert.ok(r.output.includes(testName), `no ${JSON.stringify(testName)} in:\n${r.output}`);
  if (summary) assert.match(r.output, /\[mate-guard\] summary: \d+ allocations? guarded, .*1 violation/, r.output);
}

test('plain vitest with the plugin', async () => {
  assertCaught(await runUser(bin('vitest'), ['run', '--', '--guard-alloc']), 'fills a 64-byte buffer');
});

test('mate-vitest', async () => {
  assertCaught(await runUser(bin('mate-vitest'), ['run', '--guard-alloc']), 'fills a 64-byte buffer');
});

// Plain jest (in band: one file) and plain mocha run the tests in their
// only process, which the fault ends: the report is all there is.
test('plain jest with the environment and the reporter', async () => {
  assertCaught(await runUser(bin('jest'), [], { env: { MATE_JEST_GUARD_ALLOC: '1' } }), 'fills a 64-byte buffer', {
    summary: false,
  });
});

test('mate-jest', async () => {
  assertCaught(await runUser(bin('mate-jest'), ['--guard-alloc']), 'fills a 64-byte buffer');
});

test('plain mocha --require @mate-guard/mocha', async () => {
  assertCaught(
    await runUser(bin('mocha'), ['--require', '@mate-guard/mocha', '--guard-alloc=true', 'mocha/']),
    'fills a 64-byte buffer',
    { summary: false },
  );
});

test('mate-mocha', async () => {
  assertCaught(await runUser(bin('mate-mocha'), ['--guard-alloc=true', 'mocha/']), 'fills a 64-byte buffer');
});

// node --test with --import: Node 20 loads the plugin in the test file's
// process only, which the fault ends, so no summary.
test('node --test --require @mate-guard/node-test, and --import', async () => {
  for (const preload of ['--require', '--import']) {
    // The spec reporter, as on a terminal (TAP, the default in a pipe, escapes '#').
    const r = await runUser(
      'node',
      ['--test', '--test-reporter=spec', preload, '@mate-guard/node-test', 'node-test/'],
      { env: { MATE_NODE_TEST_GUARD_ALLOC: '1' } },
    );
    assertCaught(r, 'fills a 64-byte buffer', { summary: preload === '--require' });
  }
});

test('mate-node-test', async () => {
  assertCaught(
    await runUser(bin('mate-node-test'), ['--guard-alloc', '--test-reporter=spec', 'node-test/']),
    'fills a 64-byte buffer',
  );
});

test('mate guard-run', async () => {
  const r = await runUser(bin('mate'), ['guard-run', '--', 'node', 'scripts/overflow.js']);
  assertCaught(r, null);
  assert.doesNotMatch(r.output, /not reached/);
  // --device cuda hands Python the installed package's prebuilt CUDA library and hook (no GPU needed to see it).
  const d = await runUser(bin('mate'), [
    'guard-run',
    '--device',
    'cuda',
    '--',
    'sh',
    '-c',
    'echo "$MATE_GUARD_CUDA_LIBRARY"; echo "$PYTHONPATH"',
  ]);
  assert.equal(d.code, 0, d.output);
  assert.deepEqual(
    d.output.split('\n').slice(0, 2),
    [path.join(core, 'prebuilds', 'linux-x64', 'libmate_guard_cuda.so'), path.join(core, 'python')],
    d.output,
  );
});

test('pnpm (strict, isolated node_modules): each plugin installs with no peer warning, and the overflow is caught', async () => {
  const inPnpm = (cmd, args, opts = {}) => runUser(cmd, args, { ...opts, cwd: pnpmProject });
  const store = path.join(tmp, 'pnpm-store');
  // `mate` comes with @mate-guard/core: pnpm links only direct dependencies' commands.
  for (const args of [...INSTALLS, ['@mate-guard/core']]) {
    const r = await inPnpm('pnpm', ['add', '-D', '--store-dir', store, ...args]);
    assert.equal(r.code, 0, r.output);
    assert.doesNotMatch(r.output, /peer/i, `pnpm add -D ${args.join(' ')}: peer warnings`);
    assert.doesNotMatch(
      r.output,
      /Ignored build scripts:[^\n]*@mate-guard/,
      `pnpm ignored a build script of ours:\n${r.output}`,
    );
  }
  // Isolated: the project sees its direct dependencies only.
  assert.deepEqual(fs.readdirSync(path.join(pnpmProject, 'node_modules', '@mate-guard')).sort(), [
    'core',
    'jest-env',
    'mocha',
    'node-test',
    'vitest',
  ]);
  assert.ok(!fs.existsSync(path.join(pnpmProject, 'node_modules', 'cmake-js')));
  const pbin = (name) => path.join(pnpmProject, 'node_modules', '.bin', name);
  assertCaught(await inPnpm(pbin('vitest'), ['run', '--', '--guard-alloc']), 'fills a 64-byte buffer');
  assertCaught(await inPnpm(pbin('mate-jest'), ['--guard-alloc']), 'fills a 64-byte buffer');
  assertCaught(await inPnpm(pbin('jest'), [], { env: { MATE_JEST_GUARD_ALLOC: '1' } }), 'fills a 64-byte buffer', {
    summary: false,
  });
  assertCaught(
    await inPnpm(pbin('mocha'), ['--require', '@mate-guard/mocha', '--guard-alloc=true', 'mocha/']),
    'fills a 64-byte buffer',
    { summary: false },
  );
  const nodeTest = await inPnpm(
    'node',
    ['--test', '--test-reporter=spec', '--require', '@mate-guard/node-test', 'node-test/'],
    { env: { MATE_NODE_TEST_GUARD_ALLOC: '1' } },
  );
  assertCaught(nodeTest, 'fills a 64-byte buffer');
  assertCaught(await inPnpm(pbin('mate'), ['guard-run', '--', 'node', 'scripts/overflow.js']), null);
});

test('a project on Jest 29, the floor of the peer range: npm install -D @mate-guard/jest-env keeps its Jest, with no peer warning, and the overflow is caught', async () => {
  const inJest29 = (cmd, args, opts = {}) => runUser(cmd, args, { ...opts, cwd: jest29Project });
  const jbin = (name) => path.join(jest29Project, 'node_modules', '.bin', name);
  const onJest29 = await inJest29('npm', ['install', '-D', 'jest@29']);
  assert.equal(onJest29.code, 0, onJest29.output);
  // What a project already on Jest 29 runs (the README's command names no runner then).
  const r = await inJest29('npm', ['install', '-D', '@mate-guard/jest-env']);
  assert.equal(r.code, 0, r.output);
  assert.doesNotMatch(r.output, /peer|ERESOLVE/i, `npm install -D @mate-guard/jest-env on Jest 29: peer warnings`);
  const version = await inJest29(jbin('jest'), ['--version']);
  assert.equal(version.output.trim(), '29.7.0', 'the project no longer runs Jest 29');
  assertCaught(await inJest29(jbin('mate-jest'), ['--guard-alloc']), 'fills a 64-byte buffer');
  assertCaught(await inJest29(jbin('jest'), [], { env: { MATE_JEST_GUARD_ALLOC: '1' } }), 'fills a 64-byte buffer', {
    summary: false,
  });
});

/** Each way to run guarded: [command, arguments, environment]. */
const ENTRY_POINTS = [
  [bin('vitest'), ['run', '--', '--guard-alloc']],
  [bin('mate-vitest'), ['run', '--guard-alloc']],
  [bin('jest'), [], { MATE_JEST_GUARD_ALLOC: '1' }],
  [bin('mate-jest'), ['--guard-alloc']],
  [bin('mocha'), ['--require', '@mate-guard/mocha', '--guard-alloc=true', 'mocha/']],
  [bin('mate-mocha'), ['--guard-alloc=true', 'mocha/']],
  ['node', ['--test', '--require', '@mate-guard/node-test', 'node-test/'], { MATE_NODE_TEST_GUARD_ALLOC: '1' }],
  [bin('mate-node-test'), ['--guard-alloc', 'node-test/']],
  [bin('mate'), ['guard-run', '--', 'node', 'scripts/overflow.js']],
];

// Bad input: the binaries are damaged in place, so these run last.
const prebuiltNode = () => path.join(core, 'prebuilds', 'linux-x64', 'mate_guard.node');
const manifestFile = () => path.join(core, 'prebuilds', 'linux-x64', 'manifest.json');

test('a corrupt prebuilt binary and no compiler: one line from every entry point and from mate build-native, naming what was tried', async () => {
  const good = fs.readFileSync(prebuiltNode());
  fs.writeFileSync(prebuiltNode(), good.subarray(0, 4096)); // a download cut short
  try {
    // Every entry point: exit 2 and the loader's line, no stack.
    const expected =
      /^[\w-]+: no native allocator loads here \(tried prebuilds\/linux-x64\/mate_guard\.node: truncated \(4096 bytes, its headers say at least \d+\); build\/Release\/mate_guard\.node: not built from source\); build it from source: install cmake >= 3\.15, make and a C\+\+17 compiler .*, then run: node \S+\/node_modules\/@mate-guard\/core\/bin\/mate\.js build-native$/m;
    for (const [cmd, args, env] of ENTRY_POINTS) {
      const e = await runUser(cmd, args, { env });
      const what = [path.basename(cmd), ...args].join(' ');
      assert.equal(e.code, 2, `${what}:\n${e.output}`);
      assert.match(e.output, expected, what);
      assert.doesNotMatch(e.output, /^\s+at /m, `${what} printed a stack:\n${e.output}`);
    }
    // The command that line names, on this PATH: why it cannot build, in one line.
    const b = await runUser(bin('mate'), ['build-native']);
    assert.equal(b.code, 1, b.output);
    assert.match(
      b.output,
      /^mate build-native: cannot build for linux-x64 \(prebuilt prebuilds\/linux-x64\/mate_guard\.node: truncated \(.*\); no cmake on PATH, no make or ninja on PATH, no C\+\+ compiler on PATH \(tried c\+\+, g\+\+, clang\+\+\)\): install cmake >= 3\.15, make and a C\+\+17 compiler .*, then run it again$/m,
      b.output,
    );
    assert.doesNotMatch(b.output, /CMake|cmake-js|make\[/, 'build tool output leaked');
  } finally {
    fs.writeFileSync(prebuiltNode(), good);
  }
});

test('a prebuilt binary that needs a newer glibc: mate build-native builds from the tarball alone, and the build is used', async () => {
  const manifest = JSON.parse(fs.readFileSync(manifestFile(), 'utf8'));
  fs.writeFileSync(manifestFile(), JSON.stringify({ ...manifest, glibc: '99.0' }));
  const glibc = process.report.getReport().header.glibcVersionRuntime;
  const refused = await runUser(bin('mate'), ['guard-run', '--', 'node', 'scripts/overflow.js']);
  assert.equal(refused.code, 2, refused.output);
  assert.ok(
    refused.output.includes(`prebuilds/linux-x64/mate_guard.node: needs glibc >= 99.0, this system has ${glibc}`),
    refused.output,
  );
  // With build tools (this machine's own PATH): built from the package's own files.
  const r = await runUser(bin('mate'), ['build-native'], { env: { PATH: process.env.PATH }, timeout: 480_000 });
  assert.equal(r.code, 0, r.output);
  assert.ok(
    r.output.includes(
      `mate build-native: built the native allocator from source (prebuilt prebuilds/linux-x64/mate_guard.node: needs glibc >= 99.0, this system has ${glibc})`,
    ),
    r.output,
  );
  assert.ok(fs.existsSync(path.join(core, 'build', 'Release', 'mate_guard.node')));
  assertCaught(await runUser(bin('mate'), ['guard-run', '--', 'node', 'scripts/overflow.js']), null);
});
