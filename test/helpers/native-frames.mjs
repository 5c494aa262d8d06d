// Helpers for the native-stack tests: the example addon and its planted lines.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ROOT } from './run.mjs';

export const ADDON = path.join(ROOT, 'examples', 'addon', 'build', 'Release', 'buggy_addon.node');
export const BUGGY_CC = path.join(ROOT, 'examples', 'addon', 'src', 'buggy.cc');

/** The 1-based line of `file` holding `text`. */
export function lineOf(file, text) {
  const i = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(text));
  if (i < 0) throw new Error(`${path.basename(file)} has no line with ${text}`);
  return i + 1;
}

/** The 1-based line of buggy.cc holding `text`. */
export const buggyLine = (text) => lineOf(BUGGY_CC, text);

const SITES = {
  overflow: ['FillInclusive', 'POKE(p + i, 0x41)'],
  underflow: ['ReverseFill', 'POKE(p + i, 0x42)'],
  gap: ['WriteAt', 'POKE(p + off, value)'],
  'use-after-free': ['TouchRetained', 'POKE(g_retained, 0x44)'],
};

/**
 * The access block's first frame of a planted bug, as a report prints it:
 * `#0 FillInclusive <path>/examples/addon/src/buggy.cc:36 (buggy_addon.node+0x62a8)`.
 */
export function accessSite(bug) {
  const [fn, text] = SITES[bug];
  return new RegExp(
    `^==mate-guard==   #0 ${fn} (?:\\S*/)?examples/addon/src/buggy\\.cc:${buggyLine(text)} \\(buggy_addon\\.node\\+0x[0-9a-f]+\\)$`,
    'm',
  );
}
