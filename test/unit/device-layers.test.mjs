// The device guard's folders are layers (packages/core-native/src/native/device/):
// driver/ < allocator/ < launch/ < the facade (device/ itself) < embed/. A file
// may include its own layer and those below it, never one above: what a
// layer needs from above is handed to it (allocator_hooks.h, tracker_hooks.h),
// and the allocator builds and is tested alone (mate_guard_device_allocator_tests).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const DEVICE = path.join(ROOT, 'packages', 'core-native', 'src', 'native', 'device');
const LAYERS = ['driver', 'allocator', 'launch', 'facade', 'embed'];

/** The layer of a path under device/ ('driver/cupti.h', 'device_guard.h'). */
function layerOf(rel) {
  const parts = rel.split('/');
  return parts.length === 1 ? 'facade' : parts[0];
}

/** Every `#include "device/..."` that reaches above its file's layer, as 'file -> include'. */
function upwardIncludes(deviceDir) {
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full);
        continue;
      }
      if (!/\.(cc|h|inc)$/.test(entry.name)) continue;
      const rel = path.relative(deviceDir, full).split(path.sep).join('/');
      const own = layerOf(rel);
      assert.ok(
        LAYERS.includes(own),
        `${rel}: device/${own}/ is no layer (allowed: ${LAYERS.join(', ')}); add it to test/unit/device-layers.test.mjs`,
      );
      for (const line of fs.readFileSync(full, 'utf8').split('\n')) {
        const m = /^\s*#\s*include\s+"device\/([^"]+)"/.exec(line);
        if (!m) continue;
        const target = layerOf(m[1]);
        assert.ok(
          LAYERS.includes(target),
          `${rel} includes device/${m[1]}: device/${target}/ is no layer (allowed: ${LAYERS.join(', ')})`,
        );
        if (LAYERS.indexOf(target) > LAYERS.indexOf(own)) found.push(`${rel} -> device/${m[1]}`);
      }
    }
  };
  walk(deviceDir);
  return found.sort();
}

test('no device folder includes a folder above it (driver < allocator < launch < facade < embed)', () => {
  const upward = upwardIncludes(DEVICE);
  assert.deepEqual(upward, [], `a lower device folder includes a higher one:\n  ${upward.join('\n  ')}`);
});

test('the allocator includes nothing from launch tracking, the facade or the embeddings', () => {
  const upward = upwardIncludes(DEVICE).filter((u) => u.startsWith('allocator/') || u.startsWith('driver/'));
  assert.deepEqual(upward, []);
});

test('an allocator file that includes the facade is named, with the include', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-layers-'));
  try {
    fs.mkdirSync(path.join(dir, 'allocator'));
    fs.mkdirSync(path.join(dir, 'driver'));
    fs.writeFileSync(
      path.join(dir, 'allocator', 'pool.cc'),
      '#include "device/driver/cuda_driver.h"\n#include "device/device_guard.h"\n',
    );
    fs.writeFileSync(path.join(dir, 'driver', 'load.cc'), '#include "device/launch/launch_tracker.h"\n');
    fs.writeFileSync(path.join(dir, 'device_guard.h'), '#include "device/allocator/device_allocator.h"\n');
    assert.deepEqual(upwardIncludes(dir), [
      'allocator/pool.cc -> device/device_guard.h',
      'driver/load.cc -> device/launch/launch_tracker.h',
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
