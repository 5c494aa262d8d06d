// Which native binary the loader takes (binary-fit.ts), on package folders
// made here: a prebuilt copy of this checkout's real binary with manifests
// that fit or not, damaged copies, and the hosts it cannot see from this
// machine (musl, arm64, macOS) given as values.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const fit = await import(path.join(ROOT, 'packages', 'core-native', 'dist', 'install', 'binary-fit.js'));
const BUILT = path.join(ROOT, 'packages', 'core-native', 'build', 'Release', 'mate_guard.node');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-fit-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const here = fit.currentHost();
const glibcHost = { platform: 'linux', arch: 'x64', glibc: '2.36', target: 'linux-x64' };

/** A package folder with prebuilds/linux-x64/{mate_guard.node (bytes), manifest.json (manifest)}. */
function pkg(name, bytes, manifest) {
  const dir = path.join(tmp, name);
  const pre = path.join(dir, 'prebuilds', 'linux-x64');
  fs.mkdirSync(pre, { recursive: true });
  if (bytes) fs.writeFileSync(path.join(pre, 'mate_guard.node'), bytes);
  if (manifest !== undefined)
    fs.writeFileSync(
      path.join(pre, 'manifest.json'),
      typeof manifest === 'string' ? manifest : JSON.stringify(manifest),
    );
  return dir;
}

const real = fs.readFileSync(BUILT);
const good = { target: 'linux-x64', glibc: '2.35', glibcxx: '3.4.30', napi: 9, files: ['mate_guard.node'] };

test('this machine is linux-x64 with glibc, a supported target', () => {
  assert.equal(here.target, 'linux-x64');
  assert.match(here.glibc, /^2\.\d+$/);
  assert.equal(fit.unsupportedReason(here), null);
});

test('linux-arm64 with glibc is supported too', () => {
  assert.equal(fit.unsupportedReason({ platform: 'linux', arch: 'arm64', glibc: '2.39', target: 'linux-arm64' }), null);
});

test('other targets are refused with one line that names them', () => {
  for (const host of [
    { platform: 'linux', arch: 'x64', glibc: null, target: 'linux-x64-musl' },
    { platform: 'linux', arch: 'arm64', glibc: null, target: 'linux-arm64-musl' },
    { platform: 'darwin', arch: 'arm64', glibc: null, target: 'darwin-arm64' },
  ]) {
    assert.equal(
      fit.unsupportedReason(host),
      `${host.target} is not supported: mate-guard runs on Linux x86-64 and arm64 with glibc only (see "Platforms" in the README of @mate-guard/core)`,
    );
  }
});

test("on arm64 a checkout's cross build in build/linux-arm64/ is tried after the others, and an x86-64 build/Release is passed over", () => {
  const dir = pkg('cross', null);
  fs.mkdirSync(path.join(dir, 'build', 'Release'), { recursive: true });
  fs.copyFileSync(BUILT, path.join(dir, 'build', 'Release', 'mate_guard.node'));
  const armHost = { platform: 'linux', arch: 'arm64', glibc: '2.36', target: 'linux-arm64' };
  assert.equal(fit.binaryCandidates(dir, 'mate_guard.node', armHost).length, 2, 'no cross build: no third candidate');
  fs.mkdirSync(path.join(dir, 'build', 'linux-arm64', 'Release'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'build', 'linux-arm64', 'Release', 'mate_guard.node'), 'x'.repeat(100));
  const labels = fit.binaryCandidates(dir, 'mate_guard.node', armHost).map((c) => [c.label, c.problem]);
  assert.deepEqual(labels, [
    ['prebuilds/linux-arm64/mate_guard.node', 'not shipped for this platform'],
    ['build/Release/mate_guard.node', 'built for ELF machine 0x3e, not arm64'],
    ['build/linux-arm64/Release/mate_guard.node', 'not an ELF shared object (corrupt or truncated)'],
  ]);
});

test('a prebuilt binary that fits is tried first, then the source build', () => {
  const dir = pkg('fits', real, good);
  assert.equal(fit.prebuiltProblem(dir, 'mate_guard.node', glibcHost), null);
  const [first, second] = fit.binaryCandidates(dir, 'mate_guard.node', glibcHost);
  assert.deepEqual([first.label, first.problem], ['prebuilds/linux-x64/mate_guard.node', null]);
  assert.deepEqual([second.label, second.problem], ['build/Release/mate_guard.node', 'not built from source']);
});

test('why a prebuilt binary is passed over', () => {
  const cases = [
    [
      'older glibc',
      pkg('old-glibc', real, good),
      { ...glibcHost, glibc: '2.31' },
      'needs glibc >= 2.35, this system has 2.31',
    ],
    [
      'glibc 2.4 < 2.35 compares as versions',
      pkg('v24', real, good),
      { ...glibcHost, glibc: '2.4' },
      'needs glibc >= 2.35, this system has 2.4',
    ],
    ['no manifest', pkg('no-manifest', real), glibcHost, 'no manifest.json'],
    ['bad manifest', pkg('bad-manifest', real, '{'), glibcHost, 'manifest.json is not JSON'],
    [
      'misplaced',
      pkg('misplaced', real, { ...good, target: 'linux-arm64' }),
      glibcHost,
      'its manifest says it is for linux-arm64',
    ],
    ['not shipped', pkg('none', null, good), glibcHost, 'not shipped for this platform'],
    [
      'not ELF',
      pkg('not-elf', Buffer.from('<html>404 Not Found</html>'.padEnd(100)), good),
      glibcHost,
      'not an ELF shared object (corrupt or truncated)',
    ],
    [
      'truncated',
      pkg('truncated', real.subarray(0, 8192), good),
      glibcHost,
      `truncated (8192 bytes, its headers say at least ${real.length})`,
    ],
  ];
  for (const [what, dir, host, problem] of cases)
    assert.equal(fit.prebuiltProblem(dir, 'mate_guard.node', host), problem, what);
  // Another architecture's binary: this one's ELF header says x86-64.
  assert.equal(fit.elfProblem(BUILT, 'arm64'), 'built for ELF machine 0x3e, not arm64');
});

test('compareVersions orders dotted versions numerically', () => {
  assert.ok(fit.compareVersions('2.35', '2.4') > 0);
  assert.equal(fit.compareVersions('2.35', '2.35.0'), 0);
  assert.ok(fit.compareVersions('3.4.30', '3.4.9') > 0);
});
