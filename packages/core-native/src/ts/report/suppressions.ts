// Suppressions: known violations (a third-party module's bug whose fix is
// pending) that are counted, not failed. The format and the one matcher are
// the native core's (src/native/report/format/suppressions.h), as the crash
// printer and Python use them; Node reads the file and asks.
//
//   # comment
//   <kind|*> <field>=<glob> [<field>=<glob> ...]
//
// Fields: function=, module=, access=, allocation=, test= (suppressions.h
// says what each matches). A value with spaces is a JSON string.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { GuardConfigError } from '../errors';
import { loadNative } from '../install/native';
import type { ViolationEvent } from './event';

/** A suppressions file as read: its name (as given) and its text, checked. */
export interface SuppressionRules {
  file: string;
  text: string;
}

/** What a suppressed event records (the event's `suppressed` field). */
export interface SuppressionVerdict {
  file: string;
  line: number;
  rule: string;
}

/** Checks a suppressions file's text; throws GuardConfigError naming `file:line`. */
export function parseSuppressions(text: string, file: string): SuppressionRules {
  const problem = loadNative().suppressionsProblem(text, file);
  if (problem) throw new GuardConfigError(problem);
  return { file, text };
}

const loaded = new Map<string, SuppressionRules>();

/** The rules of a suppressions file (read once per process); throws GuardConfigError for a missing or malformed file. */
export function loadSuppressions(file: string): SuppressionRules {
  const abs = path.resolve(file);
  let rules = loaded.get(abs);
  if (!rules) {
    let text: string;
    try {
      text = fs.readFileSync(abs, 'utf8');
    } catch (err) {
      throw new GuardConfigError(
        `${file}: cannot read the suppressions file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
    rules = parseSuppressions(text, file);
    loaded.set(abs, rules);
  }
  return rules;
}

/** The first rule that suppresses the event (its frames as symbolized), as the event records it. */
export function matchSuppression(
  e: ViolationEvent,
  rules: SuppressionRules | undefined,
): SuppressionVerdict | undefined {
  if (!rules) return undefined;
  const verdict = loadNative().matchSuppression(JSON.stringify(e), rules.text, rules.file);
  return verdict ? (JSON.parse(verdict) as SuppressionVerdict) : undefined;
}
