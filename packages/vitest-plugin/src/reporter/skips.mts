// The tests this run skipped because of a guard tag, with their reasons.
// The verbose reporter prints each reason itself; the default reporter lists
// single tests only for a one-file run, so the plugin lists them.
import * as path from 'node:path';

import { GUARD_SKIP_REASONS } from '@mate-guard/core/internal';
import type { TestModule } from 'vitest/node';

const REASONS = new Set<string>(Object.values(GUARD_SKIP_REASONS));

export function tagSkipLines(testModules: ReadonlyArray<TestModule>): string[] {
  const lines: string[] = [];
  for (const testModule of testModules) {
    const file = path.relative(process.cwd(), testModule.moduleId);
    for (const testCase of testModule.children.allTests('skipped')) {
      const result = testCase.result();
      const note = result.state === 'skipped' ? result.note : undefined;
      if (note !== undefined && REASONS.has(note))
        lines.push(`[mate-guard]   ↓ ${file} > ${testCase.fullName}: ${note}`);
    }
  }
  return lines.length ? [`[mate-guard] skipped by tag while guarding is on:`, ...lines] : [];
}
