// Suppressions in-process: the file format, what a rule matches, the line
// each report ends with (which must suppress that very report), and the
// errors a malformed file gives. The runners' side is in test/ci.test.mjs.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const core = path.join(ROOT, 'packages/core-native/dist');
const { parseSuppressions, matchSuppression, loadSuppressions } = await import(
  path.join(core, 'report/suppressions.js')
);
const { formatReport } = await import(path.join(core, 'report/format.js'));
const { GuardedRun, runExitCode } = await import(path.join(core, 'run/lifecycle.js'));
const { defaultSettings } = await import(path.join(core, 'settings/table.js'));

const event = (name, extra = {}) => ({
  ...JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/events', `${name}.json`), 'utf8')),
  ...extra,
});
// The line a report ends with (the native formatter writes it).
const suppressionLine = (e) =>
  formatReport(e)
    .split('\n')
    .at(-2)
    .replace(/^==mate-guard== suppression: /, '');
const throwsConfig = (fn, message) =>
  assert.throws(fn, (e) => e.name === 'GuardConfigError' && message.test(e.message), String(message));

const FRAMES = [
  {
    pc: '0x1',
    module: '/usr/lib/x86_64-linux-gnu/libc.so.6',
    offset: 1,
    function: '__memset_avx2_unaligned_erms',
    source: 'elf-symbols',
  },
  {
    pc: '0x2',
    module: '/abs/vendor/build/Release/legacy.node',
    offset: 2,
    function: '(anonymous namespace)::FillInclusive(Napi::CallbackInfo const&)',
    file: '/abs/vendor/src/legacy.cc',
    line: 36,
    source: 'llvm-symbolizer',
  },
  {
    pc: '0x3',
    module: '/usr/bin/node',
    offset: 3,
    function: 'v8impl::FunctionCallbackWrapper::Invoke',
    source: 'elf-symbols',
  },
];
const fault = () =>
  event('overflow', {
    test: 'legacy.test.js > fill > by one',
    accessStack: { unwind: 'unwind-tables', frames: FRAMES },
  });
const rules = (text) => parseSuppressions(text, 'mate-guard.supp');
const verdict = (text, e) => matchSuppression(e, rules(text));

test('a rule matches kind and every field it names: function, module, access, allocation, test (globs)', () => {
  const e = fault();
  for (const line of [
    'heap-buffer-overflow function=FillInclusive',
    'heap-buffer-overflow function=*::FillInclusive(*',
    '* module=*/legacy.node',
    '* module=legacy.node',
    'heap-buffer-overflow access=*/vendor/src/legacy.cc:36',
    '* allocation=*/scripts/overflow.js:5:*',
    '* allocation=Object.<anonymous>',
    'heap-buffer-overflow test="legacy.test.js > fill > *"',
    'heap-buffer-overflow function=FillInclusive test="legacy.test.js > *"',
  ])
    assert.deepEqual(verdict(line, e), { file: 'mate-guard.supp', line: 1, rule: line }, line);
  for (const line of [
    'canary-corruption function=FillInclusive',
    'heap-buffer-overflow function=Fill',
    '* module=*/other.node',
    'heap-buffer-overflow function=FillInclusive test="other.test.js > *"',
    '* allocation=*/scripts/underflow.js:*',
  ])
    assert.equal(verdict(line, e), undefined, line);
});

test('the file: comments and blank lines skipped, the first matching rule wins and names its line', () => {
  const text =
    '# known bugs in vendor code\n\ncanary-corruption allocation=*\n* module=*legacy.node\n* function=FillInclusive\n';
  assert.deepEqual(verdict(text, fault()), { file: 'mate-guard.supp', line: 4, rule: '* module=*legacy.node' });
});

test('every report ends with the line that suppresses it, and that line does', () => {
  const cases = [
    [fault(), 'heap-buffer-overflow function=FillInclusive test="legacy.test.js > fill > by one"'],
    [
      event('underflow', { test: 'u.test.js > under' }),
      'canary-corruption allocation=*underflow.js:6:* test="u.test.js > under"',
    ],
    [event('use-after-free'), 'heap-use-after-free allocation=*use-after-free.js:8:*'],
  ];
  for (const [e, line] of cases) {
    assert.equal(suppressionLine(e), line);
    assert.equal(formatReport(e).split('\n').at(-2), `==mate-guard== suppression: ${line}`);
    assert.ok(verdict(line, e), `${line} suppresses its own report`);
  }
  // A frame in the system's libraries is the caller's doing: the line names the addon's frame.
  assert.match(suppressionLine(fault()), /function=FillInclusive/);
});

test('a suppressed report says by which rule, and a fault that it still ended its process', () => {
  const e = { ...fault(), suppressed: { file: 'x.supp', line: 3, rule: '* module=*legacy.node' } };
  assert.equal(
    formatReport(e).split('\n').at(-2),
    '==mate-guard== suppressed by x.supp:3 (* module=*legacy.node): counted, not failed; a fault still ends its process',
  );
});

test('a malformed file stops with the file, the line and what is wrong', () => {
  throwsConfig(
    () => rules('# ok\nheap-overflow function=x'),
    /^mate-guard\.supp:2: unknown kind "heap-overflow"; kinds: heap-buffer-overflow, .* or \*/,
  );
  throwsConfig(
    () => rules('canary-corruption'),
    /^mate-guard\.supp:1: no field: a suppression names at least a frame or a test/,
  );
  throwsConfig(() => rules('* fun=x'), /^mate-guard\.supp:1: unknown field "fun"/);
  throwsConfig(() => rules('* test="unterminated'), /^mate-guard\.supp:1: unterminated quoted value for test=/);
  throwsConfig(() => rules('* module'), /^mate-guard\.supp:1: expected field=glob at "module"/);
  throwsConfig(
    () => loadSuppressions('/nonexistent/x.supp'),
    /^\/nonexistent\/x\.supp: cannot read the suppressions file \(ENOENT\)/,
  );
});

test('a run counts suppressed violations apart and they do not fail it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-supp-unit-'));
  const file = path.join(dir, 'known.supp');
  fs.writeFileSync(file, '* module=*legacy.node\n');
  const run = GuardedRun.start({
    runner: 'unit',
    settings: { ...defaultSettings({}), enabled: true, suppressions: file },
    env: {},
  });
  fs.writeFileSync(path.join(run.dir, 'mate-guard-4242-1.json'), JSON.stringify({ ...fault(), pid: 4242 }));
  fs.writeFileSync(
    path.join(run.dir, 'mate-guard-4243-1000001.json'),
    JSON.stringify({ ...event('underflow'), pid: 4243, delivered: 'caller' }),
  );
  const { text, exitCode, report } = run.finish({ status: 0 });
  assert.match(
    text,
    /^\[mate-guard\] summary: \d+ allocations? guarded, peak live \d+, 0 unguarded fallbacks, 1 violation, 1 suppressed, 1 process died, 0 tests skipped by tag$/m,
  );
  assert.equal(exitCode, 0, 'the fault is suppressed, the canary report failed its test already');
  const filed = JSON.parse(fs.readFileSync(report.violations.find((v) => v.pid === 4242).file, 'utf8'));
  assert.deepEqual(
    filed.suppressed,
    { file, line: 1, rule: '* module=*legacy.node' },
    'the verdict is filed for mate report',
  );
  assert.equal(runExitCode(0, [{ ...fault(), suppressed: filed.suppressed }]), 0);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(run.dir, { recursive: true, force: true });
});
