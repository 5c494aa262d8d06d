// The gc fixture suites (test/fixtures/<runner>/gc): their one test calls
// global.gc, so it passes only where node's --expose-gc reached the test's
// process; run with --guard-mode=head and allocation logging, they also show
// that the guard flags reached it.
import assert from 'node:assert/strict';

/** The run passed, gc was there, and the test's 4096-byte buffer was guarded in head mode. */
export function assertGcSuiteGuarded(r, testName) {
  assert.doesNotMatch(r.output, /globalThis\.gc is missing/, r.output);
  assert.equal(r.code, 0, r.output);
  const alloc = r.output
    .split('\n')
    .find((l) => / alloc #\d+ .*requested=4096 /.test(l) && l.includes(`test="${testName}"`));
  assert.ok(alloc, `no allocation line for the test's buffer in:\n${r.output}`);
  assert.match(alloc, / mode=head /, 'the --guard-mode value reached the test process');
  const summary = r.output.split('\n').find((l) => l.startsWith('[mate-guard] summary:'));
  assert.match(summary ?? '', /^\[mate-guard\] summary: [1-9]\d* allocations? guarded, .* 0 violations,/, r.output);
}
