// The worker side, injected as the first setup file while guarding is on:
// installs the allocator before any test file is imported, skips tests with
// a guard tag (reason visible in the reporters), names each test in reports
// and fails a test whose allocations have damaged canaries.
import { createRequire } from 'node:module';

import { afterAll, afterEach, beforeEach, inject } from 'vitest';

import { PROVIDE_KEY } from './provide.mjs';

// Node's own loader, not Vitest's module runner: one instance of the native
// allocator per process, whatever the test files import.
const core = createRequire(import.meta.url)('@mate-guard/core') as typeof import('@mate-guard/core');


// Also in pool threads: each thread that installs gets its own signal stack.
core.installForRunner(inject(PROVIDE_KEY));

// Damage to allocations made outside any test (module code, beforeAll) is
// collected here before core's bracket would carry it into the next test,
// and fails the file in afterAll: it belongs to the file, not to a test.
const outsideTests: ReturnType<typeof core.checkCanaries> = [];

beforeEach((context) => {
  outsideTests.push(...core.checkCanaries());
  const task = context.task;
  const reason = core.guardSkipReason(task.tags ?? [], true);
  if (reason !== undefined) {
    core.noteTagSkip();
    context.skip(reason);
    return;
  }
  core.beginGuardedTest(core.formatTestPath(task.file.filepath, [task.fullTestName]));
});

afterEach(() => {
  const found = core.endGuardedTest();
  if (found.length > 0) throw core.violationError(found);
});

// Workers may be ended without 'exit' handlers running: leave the counters now.
afterAll(() => {
  outsideTests.push(...core.checkCanaries()); // this file's afterAll hooks ran before this one
  core.flushGuardStats();
  if (outsideTests.length === 0) return;
  const err = core.violationError(outsideTests.splice(0));
  err.message = `outside any test (module code or beforeAll/afterAll hooks of this file): ${err.message}`;
  err.stack = `${err.name}: ${err.message}`;
  throw err;
});
