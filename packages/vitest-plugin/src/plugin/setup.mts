// The worker side, injected as the first setup file while guarding is on:
// installs the allocator (with the settings the main process handed over)
// before any test file is imported, skips tests with a guard tag (reason
// visible in the reporters), names each test in reports and fails a test
// whose allocations have damaged canaries.
import { createRequire } from 'node:module';

import { afterAll, afterEach, beforeEach, inject } from 'vitest';

import { PROJECT_SETTINGS, projectSettings } from './project-settings.mjs';

// Node's own loader, not Vitest's module runner: one instance of the native
// allocator per process, whatever the test files import.
const core = createRequire(import.meta.url)('@mate-guard/core/internal') as typeof import('@mate-guard/core/internal');

const handoff = core.readHandoff();
if (!handoff)
  throw new Error(`mate-guard: the worker has no settings from the main process (${core.HANDOFF_ENV} is not set)`);
// Also in pool threads: each thread that installs gets its own signal stack.
// The project's own plugin options where its config loads the plugin (project-settings.mts).
core.installFromSettings(projectSettings(handoff.settings, inject(PROJECT_SETTINGS)));

beforeEach((context) => {
  const task = context.task;
  const reason = core.guardSkipReason(task.tags ?? [], true);
  if (reason !== undefined) {
    core.noteTagSkip();
    context.skip(reason);
    return;
  }
  // The project's name too: one file can run in several projects.
  core.beginGuardedTest(
    core.formatTestPath(task.file.filepath, [task.fullTestName], task.file.projectName || undefined),
  );
});

afterEach(() => {
  const found = core.endGuardedTest();
  if (found.length > 0) throw core.violationError(found);
});

// Damage to allocations made outside any test (module code, beforeAll)
// fails the file; this file's afterAll hooks ran before this one. Workers
// may be ended without 'exit' handlers running: leave the counters now.
afterAll(() => {
  core.flushGuardStats();
  const found = core.takeOutsideDamage({ all: true });
  if (found.length > 0) throw core.outsideTestsError(found, 'this file');
});
