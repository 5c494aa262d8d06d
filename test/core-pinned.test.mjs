// The core pins itself once loaded (linked with -z nodelete): its signal
// handler and the allocator that chosen modules' imports now point at must
// outlive a worker_threads Worker that loaded it and exited (Node dlcloses
// a worker's addons). Before, it stayed only because glibc does not unload
// a library with GNU_UNIQUE symbols.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { reportLines, ROOT, run } from './helpers/run.mjs';

const DT_FLAGS_1 = 0x6ffffffbn;
const DF_1_NODELETE = 0x8n;
const PT_DYNAMIC = 2;

/** The DT_FLAGS_1 value of a 64-bit little-endian ELF shared object (0n when absent). */
function dtFlags1(file) {
  const b = fs.readFileSync(file);
  assert.equal(b.toString('latin1', 1, 4), 'ELF', `${file} is an ELF file`);
  assert.equal(b[4], 2, 'ELF64');
  assert.equal(b[5], 1, 'little-endian');
  const phoff = Number(b.readBigUInt64LE(0x20));
  const phentsize = b.readUInt16LE(0x36);
  for (let i = 0; i < b.readUInt16LE(0x38); i++) {
    const ph = phoff + i * phentsize;
    if (b.readUInt32LE(ph) !== PT_DYNAMIC) continue;
    const offset = Number(b.readBigUInt64LE(ph + 8));
    const size = Number(b.readBigUInt64LE(ph + 32));
    for (let d = offset; d + 16 <= offset + size; d += 16) {
      const tag = b.readBigInt64LE(d);
      if (tag === 0n) break;
      if (BigInt.asUintN(64, tag) === DT_FLAGS_1) return b.readBigUInt64LE(d + 8);
    }
  }
  return 0n;
}

test("a worker loads the core, installs guarding and exits; the main thread's fault is still reported", async () => {
  const r = await run(process.execPath, [path.join(ROOT, 'test', 'fixtures', 'core', 'worker-loads-core.js')]);
  assert.equal(r.signal, 'SIGSEGV', `the process dies by the fault, after the report:\n${r.output}`);
  assert.match(r.output, /^worker: guarding true$/m);
  const mapped = /^worker exited with 0; core still mapped: (\/.*mate_guard\.node)$/m.exec(r.output);
  assert.ok(mapped, `the core stays mapped after the worker exits:\n${r.output}`);
  const lines = reportLines(r.output);
  assert.match(
    lines[0] ?? '',
    /^==mate-guard== ERROR: heap-buffer-overflow on WRITE at 0x[0-9a-f]+: 1 byte past the end of allocation #\d+ \(64 bytes, tail mode\)$/,
    r.output,
  );
  assert.ok(
    lines.some((l) => /backend native-heap/.test(l)),
    "the allocation the worker's install redirected",
  );
  assert.ok(
    lines.some((l) => /#\d+ MallocOverflow .*native_heap\.cc:\d+ \(buggy_addon\.node\+0x[0-9a-f]+\)/.test(l)),
    "the access block names the addon's function",
  );
  assert.doesNotMatch(r.output, /not reached/);

  // The loaded core (prebuilt or built here) carries the flag that pins it.
  assert.equal(dtFlags1(mapped[1]) & DF_1_NODELETE, DF_1_NODELETE, `${mapped[1]} is linked with -z nodelete`);
});

test('the CUDA plain library is pinned too', () => {
  const dir = path.join(ROOT, 'packages', 'core-native');
  const lib = [
    path.join(dir, 'prebuilds', `${process.platform}-${process.arch}`, 'libmate_guard_cuda.so'),
    path.join(dir, 'build', 'Release', 'libmate_guard_cuda.so'),
  ].find((f) => fs.existsSync(f));
  assert.ok(lib, 'libmate_guard_cuda.so is built');
  assert.equal(dtFlags1(lib) & DF_1_NODELETE, DF_1_NODELETE, `${lib} is linked with -z nodelete`);
});
