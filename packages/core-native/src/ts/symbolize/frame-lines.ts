// Symbolized native frames printed the way sanitizers print them:
//   #0 FillInclusive examples/addon/src/buggy.cc:36 (buggy_addon.node+0x62a8)
// One line per machine frame, numbered from the access (#0) outwards. Code
// inlined into a frame gets one line per inlined function, innermost first,
// numbered #N, #N.1, #N.2 ... so that #N always matches frames[N] of the
// event: #0 is the exact statement, #0.1 the function it was inlined into.
import * as path from 'node:path';

import type { SourceLocation, SymbolizedFrame } from './types';

export interface FrameLineOptions {
  /** Source paths under this directory print relative to it (default: process.cwd()). */
  cwd?: string;
}

// `napi_value__* Napi::details::WrapCallback<...>` (a template's return
// type) -> `Napi::details::WrapCallback<...>`. Stops at `operator`, whose
// name may hold spaces and unbalanced brackets (`operator new`, `operator<`).
function withoutReturnType(s: string): string {
  let depth = 0;
  let cut = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (depth === 0 && s.startsWith('operator', i) && (i === 0 || /[\s:]/.test(s[i - 1]))) break;
    if (c === '<' || c === '(' || c === '{' || c === '[') depth++;
    else if (c === '>' || c === ')' || c === '}' || c === ']') depth--;
    else if (c === ' ' && depth === 0) cut = i;
  }
  return cut >= 0 ? s.slice(cut + 1) : s;
}

const LONG_TEMPLATE = 20;

// Long template argument lists become `<…>` and the parameter lists of
// enclosing functions `(…)`: `CallbackData<Napi::Value (*)(...), Napi::Value>::Wrapper(napi_env__*, ...)::'lambda'()`
// reads `CallbackData<…>::Wrapper(…)::'lambda'()`. The full name stays in the event.
function collapseNested(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    const open = c === '<' ? '<' : c === '(' ? '(' : undefined;
    if (!open || s.startsWith('operator', i - 8)) {
      out += c;
      continue;
    }
    const close = open === '<' ? '>' : ')';
    let depth = 0;
    let j = i;
    for (; j < s.length; j++) {
      if (s[j] === '<' || s[j] === '(') depth++;
      else if (s[j] === '>' || s[j] === ')') depth--;
      if (depth === 0) break;
    }
    if (j >= s.length || s[j] !== close) {
      out += c;
      continue;
    }
    const inner = s.slice(i + 1, j);
    const collapse = open === '<' ? inner.length > LONG_TEMPLATE : inner.length > 0;
    out += collapse ? `${open}…${close}` : `${open}${inner}${close}`;
    i = j;
  }
  return out;
}

/**
 * A demangled name cut to what a reader scans for: no return type,
 * parameter list or trailing qualifiers, no `(anonymous namespace)::`, long
 * template arguments and enclosing parameter lists elided. Namespaces,
 * classes and short template arguments stay.
 */
export function shortFunctionName(name: string): string {
  // llvm-symbolizer writes GCC's clones as ` (.cold)`, c++filt as ` [clone .cold]`.
  let s = name.replace(/\(anonymous namespace\)::/g, '').replace(/ \((\.[A-Za-z_][\w.]*)\)$/, ' [clone $1]');
  const clone = /( \[clone [^\]]*\])+$/.exec(s);
  let suffix = '';
  if (clone) {
    suffix = clone[0];
    s = s.slice(0, clone.index);
  }
  s = s.replace(/(\s+(const|volatile|&|&&))+$/, '');
  if (s.endsWith(')')) {
    let depth = 0;
    for (let i = s.length - 1; i >= 0; i--) {
      if (s[i] === ')') depth++;
      else if (s[i] === '(' && --depth === 0) {
        // The `()` of `operator()` is part of the name, not a parameter list.
        if (i > 0 && !s.slice(0, i).endsWith('operator')) s = s.slice(0, i);
        break;
      }
    }
  }
  return collapseNested(withoutReturnType(s)) + suffix;
}

function sourceText(loc: SourceLocation, cwd: string): string | undefined {
  if (!loc.file) return undefined;
  let file = loc.file;
  if (path.isAbsolute(file)) {
    const rel = path.relative(cwd, file);
    if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) file = rel;
  }
  return loc.line ? `${file}:${loc.line}` : file;
}

function where(frame: SymbolizedFrame): string {
  if (!frame.module) {
    const pc = typeof frame.pc === 'number' ? `0x${frame.pc.toString(16)}` : frame.pc ?? `0x${frame.offset.toString(16)}`;
    return `(${pc}, no module)`;
  }
  return `(${path.basename(frame.module)}+0x${frame.offset.toString(16)})`;
}

/** The lines of a symbolized stack, without any report prefix. */
export function formatNativeFrames(frames: readonly SymbolizedFrame[], options: FrameLineOptions = {}): string[] {
  const cwd = options.cwd ?? process.cwd();
  const lines: string[] = [];
  frames.forEach((frame, i) => {
    const at = where(frame);
    [frame, ...(frame.inlined ?? [])].forEach((loc, j) => {
      const parts = [j === 0 ? `#${i}` : `#${i}.${j}`];
      if (loc.function) parts.push(shortFunctionName(loc.function));
      const src = sourceText(loc, cwd);
      if (src) parts.push(src);
      parts.push(at);
      lines.push(parts.join(' '));
    });
  });
  return lines;
}
