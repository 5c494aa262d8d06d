// The settings pipeline in-process: one table, one resolver, one handoff,
// and the generated native options.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const core = path.join(ROOT, 'packages/core-native/dist');
const { parseFlags, RUNNER_FLAGS, GUARD_RUN_FLAGS } = await import(path.join(core, 'settings/flags.js'));
// Jest's spelling of a setting is its package's (the adapter's), not core's.
const { jestSpelling } = await import(path.join(ROOT, 'packages/jest-env/dist/spelling.js'));
const { resolveRunnerSettings, readOptions, BY_KEY } = await import(path.join(core, 'settings/resolve.js'));
const { writeHandoff, readHandoff, HANDOFF_ENV } = await import(path.join(core, 'settings/handoff.js'));
const { nativeOptionsInc, settingsJson, describeRunnerFlags } = await import(path.join(core, 'settings/docs.js'));
const { defaultSettings } = await import(path.join(core, 'settings/table.js'));
const { REPORT_KINDS } = await import(path.join(core, 'report/kinds.js'));
const { loadNative } = await import(path.join(core, 'install/native.js'));
const { kindsTs, HEADER, OUT } = await import(path.join(ROOT, 'packages/core-native/scripts/gen-kinds.js'));

const throwsConfig = (fn, message) =>
  assert.throws(fn, (e) => e.name === 'GuardConfigError' && message.test(e.message), String(message));

test('flag > MATE_<RUNNER>_GUARD_* > options > default, and which keys were explicit', () => {
  const options = {
    values: { guardAlloc: true, guardMode: 'head', guardLogAllocations: true },
    spelling: jestSpelling,
    source: 'testEnvironmentOptions',
  };
  const fromOptions = resolveRunnerSettings({ runner: 'jest', env: {}, options });
  assert.equal(fromOptions.settings.mode, 'head');
  assert.deepEqual(fromOptions.explicit, []);
  const fromEnv = resolveRunnerSettings({ runner: 'jest', env: { MATE_JEST_GUARD_MODE: 'tail' }, options });
  assert.equal(fromEnv.settings.mode, 'tail');
  assert.deepEqual(fromEnv.explicit, ['mode']);
  const flags = parseFlags(['--guard-mode', 'head', '--no-guard-log-allocations'], RUNNER_FLAGS).values;
  const fromFlags = resolveRunnerSettings({ runner: 'jest', env: { MATE_JEST_GUARD_MODE: 'tail' }, flags, options });
  assert.equal(fromFlags.settings.mode, 'head');
  assert.equal(fromFlags.settings.logAllocations, false);
  assert.equal(fromFlags.settings.enabled, true, 'from the options');
  assert.deepEqual(fromFlags.explicit.sort(), ['logAllocations', 'mode']);
  const none = resolveRunnerSettings({ runner: 'vitest', env: {} }).settings;
  assert.deepEqual(none, defaultSettings({}));
  assert.equal(none.enabled, false);
});

test('flags: = and space forms, negation, values taken out of argv, everything else kept in order', () => {
  const r = parseFlags(
    ['run', '--guard-alloc', '--guard-mode=head', '-t', 'x', '--guard-log-allocations', '--', '--guard-mode', 'tail'],
    RUNNER_FLAGS,
  );
  assert.deepEqual(r.values, { enabled: true, mode: 'head', logAllocations: true });
  assert.deepEqual(r.rest, ['run', '-t', 'x', '--', '--guard-mode', 'tail']);
  assert.deepEqual(r.taken, ['--guard-alloc', '--guard-mode=head', '--guard-log-allocations']);
  assert.deepEqual(parseFlags(['--mode', 'head', '--alignment=1'], GUARD_RUN_FLAGS).values, {
    mode: 'head',
    alignment: 1,
  });
});

test('bad input names the source and the value, and says what is allowed', () => {
  throwsConfig(
    () => parseFlags(['--guard-mode', 'sideways'], RUNNER_FLAGS),
    /^--guard-mode: "sideways" is not a guard mode; use tail or head$/,
  );
  throwsConfig(
    () => parseFlags(['--guard-mode'], RUNNER_FLAGS),
    /^--guard-mode needs a value: tail or head \(e\.g\. --guard-mode=tail\)$/,
  );
  throwsConfig(
    () => parseFlags(['--no-guard-mode'], RUNNER_FLAGS),
    /^--no-guard-mode: there is no negative form of --guard-mode$/,
  );
  throwsConfig(
    () => parseFlags(['--guard-mode', 'tail'], { ...RUNNER_FLAGS, spaceValues: false }),
    /plain mocha takes "tail" for a spec file; write --guard-mode=tail/,
  );
  throwsConfig(
    () => parseFlags(['--alignment', '6'], GUARD_RUN_FLAGS),
    /^--alignment: "6" is not allowed; use a power of two from 1 to 4096$/,
  );
  throwsConfig(
    () => resolveRunnerSettings({ runner: 'mocha', env: { MATE_MOCHA_GUARD_ALLOC: 'maybe' } }),
    /^MATE_MOCHA_GUARD_ALLOC: "maybe" is not a boolean; use 1\/true\/yes\/on or 0\/false\/no\/off$/,
  );
  throwsConfig(
    () => readOptions({ mode: 'middle' }, BY_KEY, 'guardAlloc() options'),
    /^guardAlloc\(\) options mode: "middle" is not a guard mode/,
  );
});

test('the handoff carries resolved settings to workers unchanged; a foreign value is refused', () => {
  const env = {};
  const settings = { ...defaultSettings({}), enabled: true, mode: 'head', reportDir: '/tmp/x' };
  writeHandoff({ settings, explicit: ['mode'], ownerPid: 42 }, env);
  assert.deepEqual(readHandoff(env), { settings, explicit: ['mode'], ownerPid: 42 });
  assert.equal(readHandoff({}), undefined);
  throwsConfig(
    () => readHandoff({ [HANDOFF_ENV]: '{"version":1,"settings":{"mode":"sideways"}}' }),
    /MATE_GUARD_SETTINGS mode: "sideways" is not a guard mode/,
  );
  throwsConfig(() => readHandoff({ [HANDOFF_ENV]: 'not json' }), /is internal to mate-guard .*: not JSON/);
});

test('options.inc is what the settings table generates', () => {
  const file = path.join(ROOT, 'packages/core-native/src/native/options/options.inc');
  assert.equal(fs.readFileSync(file, 'utf8'), nativeOptionsInc(), 'run `npm run gen:options -w @mate-guard/core`');
});

test('settings.json (read by the Python package) is what the settings table generates, and names every setting with its kind and pytest spellings', () => {
  const file = path.join(ROOT, 'packages/core-native/src/native/options/settings.json');
  assert.equal(fs.readFileSync(file, 'utf8'), settingsJson(), 'run `npm run gen:options -w @mate-guard/core`');
  const doc = JSON.parse(settingsJson());
  const mode = doc.settings.find((s) => s.key === 'mode');
  assert.deepEqual(mode.value, { type: 'choice', choices: ['tail', 'head'], what: 'guard mode' });
  assert.equal(mode.spellings.pytestEnv, 'MATE_PYTEST_GUARD_MODE');
  assert.equal(doc.settings.find((s) => s.key === 'logAllocations').spellings.pythonKey, 'log_allocations');
  assert.deepEqual(doc.settings.find((s) => s.key === 'alignment').value, {
    type: 'integer',
    min: 1,
    max: 4096,
    powerOfTwo: true,
  });
});

test('report kinds: kinds.ts is what the C++ list generates, and the addon reports the same list', () => {
  assert.equal(
    fs.readFileSync(OUT, 'utf8'),
    kindsTs(fs.readFileSync(HEADER, 'utf8')),
    'run `npm run gen:kinds -w @mate-guard/core`',
  );
  assert.deepEqual(loadNative().reportKinds(), [...REPORT_KINDS]);
});

test('--help lines come from the table', () => {
  const lines = describeRunnerFlags('mocha');
  assert.ok(
    lines.some((l) => /^  --guard-mode <tail\|head>\s+tail: .*\(env MATE_MOCHA_GUARD_MODE, default 'tail'\)$/.test(l)),
    lines.join('\n'),
  );
  assert.ok(lines.some((l) => l.startsWith('  --guard-alloc, --no-guard-alloc ')));
});

test('a misspelled guard flag is an error naming the closest setting, never passed on', () => {
  throwsConfig(
    () => parseFlags(['run', '--guard-mod=head'], RUNNER_FLAGS),
    /^unknown option "--guard-mod"; did you mean --guard-mode\?$/,
  );
  throwsConfig(
    () => parseFlags(['--guard-allco'], RUNNER_FLAGS),
    /^unknown option "--guard-allco"; did you mean --guard-alloc\?$/,
  );
  throwsConfig(() => parseFlags(['--no-guard-rerunn'], RUNNER_FLAGS), /did you mean --no-guard-rerun\?$/);
  throwsConfig(() => parseFlags(['--guard-suppresions', 'x'], RUNNER_FLAGS), /did you mean --guard-suppressions\?$/);
  throwsConfig(
    () => parseFlags(['--guard-xyzzy'], RUNNER_FLAGS),
    /^unknown option "--guard-xyzzy"; known: --guard-alloc, --no-guard-alloc, --guard-mode, /,
  );
  throwsConfig(() => parseFlags(['--mod', 'head'], GUARD_RUN_FLAGS), /^unknown option "--mod"; did you mean --mode\?$/);
  // Not ours: left for the runner, and anything after `--` is the command's.
  assert.deepEqual(parseFlags(['--guardian', '-t', '--guard', '--', '--guard-mod'], RUNNER_FLAGS).rest, [
    '--guardian',
    '-t',
    '--guard',
    '--',
    '--guard-mod',
  ]);
});

test('run-wide settings: a report directory and a suppressions file (checked, made absolute)', () => {
  const file = path.join(ROOT, 'test/fixtures/suppressions/one.supp');
  const rel = path.relative(process.cwd(), file);
  const { values } = parseFlags(['--guard-report-dir', 'out/reports', `--guard-suppressions=${rel}`], RUNNER_FLAGS);
  assert.deepEqual(values, { reportDir: 'out/reports', suppressions: file });
  assert.equal(
    resolveRunnerSettings({ runner: 'mocha', env: { MATE_MOCHA_GUARD_REPORT_DIR: '/r' } }).settings.reportDir,
    '/r',
  );
  assert.equal(defaultSettings({}).reportDir, undefined, 'unset: a run uses a temporary directory');
  assert.equal(defaultSettings({ MATE_GUARD_REPORT_DIR: '/g' }).reportDir, '/g');
  throwsConfig(
    () => parseFlags(['--guard-suppressions', 'nope.supp'], RUNNER_FLAGS),
    /^--guard-suppressions: .*nope\.supp: cannot read the suppressions file \(ENOENT\)$/,
  );
  throwsConfig(
    () =>
      resolveRunnerSettings({
        runner: 'jest',
        env: { MATE_JEST_GUARD_SUPPRESSIONS: path.join(ROOT, 'test/fixtures/suppressions/malformed.supp') },
      }),
    /^MATE_JEST_GUARD_SUPPRESSIONS: .*malformed\.supp:3: unknown kind "heap-overflow"/,
  );
});
