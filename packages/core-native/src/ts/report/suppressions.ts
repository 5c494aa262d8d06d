// Suppressions: known violations (a third-party module's bug whose fix is
// pending) that are counted, not failed. One small text format, one
// matcher, one generator of the ready-to-paste line each report ends with.
//
//   # comment
//   <kind|*> <field>=<glob> [<field>=<glob> ...]
//
// Fields (every one given must match; at least one):
//   function=   the function of a frame: the access stack's native frames
//               (full demangled name, or as a report prints it) and the
//               allocation stack's JS frames
//   module=     a native frame's module (absolute path or file name)
//   access=     any part of an access-stack frame: function, module, source file[:line]
//   allocation= any part of an allocation-stack frame: function, file[:line[:col]], the whole frame
//   test=       the test that was running (else the one that allocated), `file > suite > test`
// A glob matches the whole string: `*` any characters, `?` one. A value with
// spaces is written as a JSON string: test="a.test.js > suite > *".
import * as fs from 'node:fs';
import * as path from 'node:path';

import { GuardConfigError } from '../errors';
import { shortFunctionName } from '../symbolize/frame-lines';
import type { NativeStack, ViolationEvent } from './event';
import { REPORT_KINDS } from './kinds';

const FIELDS = ['function', 'module', 'access', 'allocation', 'test'] as const;
type Field = (typeof FIELDS)[number];

export interface SuppressionRule {
  kind: string;
  fields: Partial<Record<Field, RegExp>>;
  /** Where it was read: for the summary and for `suppressed by <file>:<line>`. */
  file: string;
  line: number;
  /** The line as written. */
  text: string;
}

/** What a suppressed event records (the event's `suppressed` field). */
export interface SuppressionVerdict {
  file: string;
  line: number;
  rule: string;
}

function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[\\s\\S]*').replace(/\?/g, '[\\s\\S]');
  return new RegExp(`^${body}$`);
}

/** `key=value` tokens; a value is a bare word or a JSON string. */
function tokens(rest: string, fail: (why: string) => never): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let i = 0;
  while (i < rest.length) {
    if (/\s/.test(rest[i])) {
      i++;
      continue;
    }
    const eq = /^([A-Za-z-]+)=/.exec(rest.slice(i));
    if (!eq) fail(`expected field=glob at ${JSON.stringify(rest.slice(i).split(/\s/)[0])}`);
    i += eq[0].length;
    let value: string;
    if (rest[i] === '"') {
      const m = /^"(?:[^"\\]|\\.)*"/.exec(rest.slice(i));
      if (!m) fail(`unterminated quoted value for ${eq[1]}=`);
      try {
        value = JSON.parse(m[0]) as string;
      } catch {
        fail(`bad quoted value for ${eq[1]}=: ${m[0]}`);
      }
      i += m[0].length;
    } else {
      const m = /^\S*/.exec(rest.slice(i))!;
      value = m[0];
      i += value.length;
    }
    if (value === '') fail(`empty value for ${eq[1]}=`);
    out.push([eq[1], value]);
  }
  return out;
}

/** Parses a suppressions file's text; throws GuardConfigError naming `file:line`. */
export function parseSuppressions(text: string, file: string): SuppressionRule[] {
  const rules: SuppressionRule[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    const body = raw.trim();
    if (body === '' || body.startsWith('#')) return;
    const fail = (why: string): never => {
      throw new GuardConfigError(`${file}:${line}: ${why} (in ${JSON.stringify(body)}); a line is: <kind|*> <field>=<glob> ..., fields ${FIELDS.join(', ')}`);
    };
    const [kind] = body.split(/\s/, 1);
    if (kind !== '*' && !(REPORT_KINDS as readonly string[]).includes(kind)) {
      fail(`unknown kind ${JSON.stringify(kind)}; kinds: ${REPORT_KINDS.join(', ')} or *`);
    }
    const fields: Partial<Record<Field, RegExp>> = {};
    for (const [name, value] of tokens(body.slice(kind.length), fail)) {
      if (!(FIELDS as readonly string[]).includes(name)) fail(`unknown field ${JSON.stringify(name)}`);
      if (fields[name as Field]) fail(`${name}= given twice`);
      fields[name as Field] = globToRegExp(value);
    }
    if (Object.keys(fields).length === 0) fail('no field: a suppression names at least a frame or a test');
    rules.push({ kind, fields, file, line, text: body });
  });
  return rules;
}

const loaded = new Map<string, SuppressionRule[]>();

/** The rules of a suppressions file (read once per process); throws GuardConfigError for a missing or malformed file. */
export function loadSuppressions(file: string): SuppressionRule[] {
  const abs = path.resolve(file);
  let rules = loaded.get(abs);
  if (!rules) {
    let text: string;
    try {
      text = fs.readFileSync(abs, 'utf8');
    } catch (err) {
      throw new GuardConfigError(`${file}: cannot read the suppressions file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    rules = parseSuppressions(text, file);
    loaded.set(abs, rules);
  }
  return rules;
}

// The strings each field is matched against, per frame.

function nativeNames(name: string | undefined): string[] {
  return name ? [name, shortFunctionName(name)] : [];
}

/** `at fn (file:line:col)` / `at file:line:col` -> its parts. */
function jsFrameParts(line: string): { fn?: string; file?: string; line?: string; col?: string; whole: string } {
  const whole = line.trim().replace(/^at\s+/, '');
  const m = /^(?:(.*?) \()?(.*?)(?::(\d+))?(?::(\d+))?\)?$/.exec(whole);
  if (!m) return { whole };
  const file = m[2].startsWith('file://') ? m[2].slice('file://'.length) : m[2];
  return { fn: m[1], file, line: m[3], col: m[4], whole };
}

function jsCandidates(stack: string | null): { functions: string[]; parts: string[] } {
  const functions: string[] = [];
  const parts: string[] = [];
  for (const l of (stack ?? '').split('\n')) {
    if (!l.trim().startsWith('at ')) continue;
    const f = jsFrameParts(l);
    if (f.fn) functions.push(f.fn, f.fn.replace(/^(async |new )/, ''));
    parts.push(f.whole);
    if (f.fn) parts.push(f.fn);
    if (f.file) {
      parts.push(f.file);
      if (f.line) parts.push(`${f.file}:${f.line}`);
      if (f.col) parts.push(`${f.file}:${f.line}:${f.col}`);
    }
  }
  return { functions, parts };
}

/** A native stack's function names, modules and `file:line` parts. */
function nativeCandidates(stack: NativeStack | null | undefined): { functions: string[]; modules: string[]; parts: string[] } {
  const functions: string[] = [];
  const modules: string[] = [];
  const parts: string[] = [];
  for (const f of stack?.frames ?? []) {
    const names = [...nativeNames(f.function), ...(f.inlined ?? []).flatMap((i) => nativeNames(i.function))];
    functions.push(...names);
    if (f.module) modules.push(f.module, path.basename(f.module));
    parts.push(...names, ...(f.module ? [f.module, path.basename(f.module)] : []));
    if (f.file) parts.push(f.file, `${f.file}:${f.line ?? 0}`);
  }
  return { functions, modules, parts };
}

function matches(rule: SuppressionRule, e: ViolationEvent): boolean {
  if (rule.kind !== '*' && rule.kind !== e.kind) return false;
  const any = (re: RegExp | undefined, values: readonly string[]) => re === undefined || values.some((v) => re.test(v));
  const access = nativeCandidates(e.accessStack);
  // The allocation's stack: JS frames, or native ones (native-heap allocations).
  const js = jsCandidates(e.allocation?.allocStack ?? null);
  const native = nativeCandidates(e.allocation?.allocFrames);
  const alloc = { functions: [...js.functions, ...native.functions], parts: [...js.parts, ...native.parts] };
  const test = e.test ?? e.allocation?.allocTest ?? null;
  return (
    any(rule.fields.function, [...access.functions, ...alloc.functions]) &&
    any(rule.fields.module, access.modules) &&
    any(rule.fields.access, access.parts) &&
    any(rule.fields.allocation, alloc.parts) &&
    (rule.fields.test === undefined || (test !== null && rule.fields.test.test(test)))
  );
}

/** The first rule that suppresses the event, as the event records it. */
export function matchSuppression(e: ViolationEvent, rules: readonly SuppressionRule[]): SuppressionVerdict | undefined {
  const rule = rules.find((r) => matches(r, e));
  return rule ? { file: rule.file, line: rule.line, rule: rule.text } : undefined;
}

// System libraries, the runtime and mate-guard itself (its terminate hook
// is on an uncaught exception's stack): a fault inside memcpy is the caller's doing.
const SYSTEM_MODULE = /^(libc|libm|libstdc\+\+|libgcc_s|libpthread|ld-linux[^/]*)([.-][^/]*)?\.so(\.[\d.]+)?$|^node$|^mate_guard\.node$/;

/** A system library's, the runtime's or mate-guard's own frame: never where a report points. */
export const isSystemModule = (module: string): boolean => SYSTEM_MODULE.test(path.basename(module));
