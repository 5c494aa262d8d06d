// A chosen module's own C++ template code runs from the module: node 20
// exports weak instantiations of common std:: containers, and the dynamic
// linker binds an addon's calls to node's copies (with node's operator
// new, outside the guard). The patcher binds the module's import slots of
// its own weak functions back to its own definitions (as RTLD_DEEPBIND
// would for that module alone), so its containers allocate through the
// guard. Fixture: an addon whose std::unordered_map<size_t, size_t> remove
// reads the node it just erased.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';

import { buildSharedObject, cxxCompiler, findOnPath } from './helpers/compile.mjs';
import { ROOT, guardRun, reportLines, run } from './helpers/run.mjs';

const FIX = path.join(ROOT, 'test', 'fixtures', 'own-templates');
const SCRIPT = path.join(FIX, 'remove.js');
const OPERATOR =
  '_ZNSt8__detail9_Map_baseImSt4pairIKmmESaIS3_ENS_10_Select1stESt8equal_toImESt4hashImENS_18_Mod_range_hashingENS_20_Default_ranged_hashENS_20_Prime_rehash_policyENS_17_Hashtable_traitsILb0ELb0ELb1EEELb1EE';

/** map_addon.node (at -O1: GCC 12 at -O2 inlines the map's operator[], leaving nothing for node to serve). */
const addon = () =>
  buildSharedObject(cxxCompiler(), path.join(FIX, 'build', 'map_addon.node'), [path.join(FIX, 'map_addon.cc')], {
    flags: ['-O1', '-g', '-std=c++17'],
  });

/** The weak functions both the addon defines and node exports (nm), mangled. */
function sharedWithNode(file) {
  const defined = (f) =>
    spawnSync('nm', ['-D', '--defined-only', f], { encoding: 'utf8', maxBuffer: 64 << 20 })
      .stdout.split('\n')
      .map((l) => l.split(' '));
  const node = new Set(defined(process.execPath).map((p) => p[2]));
  return defined(file)
    .filter((p) => p[1] === 'W' && node.has(p[2]))
    .map((p) => p[2]);
}

const why = !cxxCompiler() ? 'no C++ compiler on PATH' : !findOnPath('nm') ? 'no nm (binutils) on PATH' : '';
const skip = why || false;

test("the fixture is the shape: node exports the addon's map operator[] (so the linker would bind its calls there)", {
  skip,
}, () => {
  const shared = sharedWithNode(addon());
  assert.ok(
    shared.some((s) => s.startsWith(OPERATOR)),
    `this node does not export the map's operator[]: ${shared.join(', ') || 'nothing shared'}`,
  );
});

test('plain: the stale read is silent (ordinary freed memory)', { skip }, async () => {
  const r = await run(process.execPath, [SCRIPT], { env: { MAP_ADDON: addon() } });
  assert.equal(r.code, 0, r.output);
  assert.match(r.stdout, /^removed value \d+$/m);
});

test("guarded --native '*map_addon.node': heap-use-after-free at the read, allocated in the module's own operator[]", {
  skip,
}, async () => {
  const r = await guardRun(['--native', '*map_addon.node'], [SCRIPT], { env: { MAP_ADDON: addon() } });
  assert.notEqual(r.code, 0, r.output);
  const lines = reportLines(r.output);
  assert.match(
    lines[0] ?? '',
    /^==mate-guard== ERROR: heap-use-after-free on READ at 0x[0-9a-f]+: offset \d+ inside freed allocation #\d+ \(\d+ bytes, tail mode\)$/,
    r.output,
  );
  assert.match(
    r.output,
    /^==mate-guard== {3}#0 Remove \S*map_addon\.cc:46 \(map_addon\.node\+0x[0-9a-f]+\)$/m,
    'the access site is the read after erase',
  );
  assert.match(
    r.output,
    /^==mate-guard== allocated at:\n(?:==mate-guard== {3}#0(?:\.\d+)? .*\n)*==mate-guard== {3}#0\.\d+ std::__detail::_Map_base<…>::operator\[\] \S*hashtable_policy\.h:\d+ \(map_addon\.node\+/m,
    "allocated by the module's own copy",
  );
});

test('--log-allocations says which of its own weak functions were re-bound: one line, the count and the first names', {
  skip,
}, async () => {
  const r = await guardRun(['--native', '*map_addon.node', '--log-allocations'], [SCRIPT], {
    env: { MAP_ADDON: addon() },
  });
  const rebound = r.stderr.split('\n').filter((l) => l.includes('of its own weak functions re-bound'));
  assert.equal(rebound.length, 1, r.stderr);
  assert.match(
    rebound[0],
    /^\[mate-guard\] native heap: \S*map_addon\.node: \d+ of its own weak functions re-bound to its own definitions \(another module's copy, e\.g\. node's C\+\+ templates, served its calls; as RTLD_DEEPBIND would\): std::__detail::_Map_base<unsigned long, std::pair<unsigned long const, unsigned long>/,
  );
});
