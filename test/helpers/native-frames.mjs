// Helpers for the native-stack tests: the example addon and its planted lines.
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
