// Helpers for the native-stack tests: the example addon's planted lines and
// the backtrace probe's output (test/fixtures/native-stack/fault.js).
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ROOT } from './run.mjs';

export const ADDON = path.join(ROOT, 'examples', 'addon', 'build', 'Release', 'buggy_addon.node');
export const BUGGY_CC = path.join(ROOT, 'examples', 'addon', 'src', 'buggy.cc');

/** The 1-based line of buggy.cc holding `text`. */
export function buggyLine(text) {
  const i = fs.readFileSync(BUGGY_CC, 'utf8').split('\n').findIndex((l) => l.includes(text));
  if (i < 0) throw new Error(`buggy.cc has no line with ${text}`);
  return i + 1;
}

/** The frames the probe printed: { method, frames: [{ pc, offset, returnAddress, module }] }. */
export function probeFrames(output) {
  const head = /mate-guard-probe frames=(\d+) method=(\S+)/.exec(output);
  const frames = [];
  for (const m of output.matchAll(/^mate-guard-probe #(\d+) pc=(0x[0-9a-f]+) offset=(0x[0-9a-f]+) return=([01]) module=(.*)$/gm)) {
    frames[Number(m[1])] = { pc: m[2], offset: Number(m[3]), returnAddress: m[4] === '1', module: m[5] || null };
  }
  return { count: head ? Number(head[1]) : 0, method: head?.[2], frames };
}
