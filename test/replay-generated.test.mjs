// Thousands of forged records, built at random (a fixed seed) from hostile
// pieces: option-like test and project names, code and debugger options in
// every spelling, comma lists, `=` forms, escape sequences, links out of
// the checkout, an artifact unpacked inside it, nested JSON. Each is
// planned by the code `mate replay` runs (replay-plan.ts, with each
// runner's own option description and selection) and the plan is checked:
// nothing of the attacker's folder, the artifact or the link reaches the
// command, no code or debugger option, no name as an option. A handful
// are then given to the real `mate replay`, and run: the marker is never
// created, the victim folder survives.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { MATE, ROOT, run } from './helpers/run.mjs';

const dist = (p) => import(path.join(ROOT, 'packages', p));
const { trustContext } = await dist('core-native/dist/run/replay-trust.js');
const { runnerCommand, replayTarget } = await dist('core-native/dist/run/replay-plan.js');
const { GuardConfigError } = await dist('core-native/dist/errors.js');
const SELECTIONS = {
  mocha: (await dist('mocha-plugin/dist/selection.js')).selection,
  jest: (await dist('jest-env/dist/selection.js')).selection,
  vitest: (await dist('vitest-plugin/dist/selection.mjs')).selection,
  'node-test': (await dist('node-test/dist/selection.js')).selection,
};
const ENTRY = {
  mocha: path.join(ROOT, 'packages', 'mocha-plugin', 'bin', 'mate-mocha.js'),
  jest: path.join(ROOT, 'packages', 'jest-env', 'bin', 'mate-jest.js'),
  vitest: path.join(ROOT, 'packages', 'vitest-plugin', 'bin', 'mate-vitest.mjs'),
  'node-test': path.join(ROOT, 'packages', 'node-test', 'bin', 'mate-node-test.js'),
};

const real = (p) => fs.realpathSync(p);
// The attacker's folder: a program that leaves a marker, a victim folder.
const evil = real(fs.mkdtempSync(path.join(os.tmpdir(), 'mate-gen-attack-')));
const marker = path.join(evil, 'ran');
const code = `require('fs').writeFileSync(${JSON.stringify(marker)},'x')`;
fs.writeFileSync(path.join(evil, 'evil.cjs'), `${code};\n`);
fs.writeFileSync(path.join(evil, '.env'), `NODE_OPTIONS="--require ${path.join(evil, 'evil.cjs')}"\n`);
const victim = path.join(evil, 'victim');
fs.mkdirSync(victim);
fs.writeFileSync(path.join(victim, 'keep.txt'), 'keep');

// The checkout: a passing spec, node_modules linked to this repository's, a link out, an artifact unpacked inside.
const co = real(fs.mkdtempSync(path.join(os.tmpdir(), 'mate-gen-checkout-')));
fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(co, 'node_modules'));
fs.mkdirSync(path.join(co, 'test'));
fs.writeFileSync(path.join(co, 'test', 'a.spec.cjs'), "describe('a', () => { it('passes', () => {}); });\n");
fs.writeFileSync(path.join(co, 'setup.cjs'), '');
fs.symlinkSync(evil, path.join(co, 'link'));
const artifact = path.join(co, 'mate-guard-reports');
fs.mkdirSync(path.join(artifact, 'shard-2', 'node_modules'), { recursive: true });
fs.copyFileSync(path.join(evil, 'evil.cjs'), path.join(artifact, 'shard-2', 'evil.cjs'));
const reportDir = path.join(artifact, 'shard-1');
fs.mkdirSync(reportDir, { recursive: true });

// Hostile pieces.
const EVIL = path.join(evil, 'evil.cjs');
const ESC = ['\x1b[2K', '\x1b]0;t\x07', '\x9b2J', '\u202e', '\n'];
const PATHS = [
  EVIL,
  './link/evil.cjs',
  'link/evil.cjs',
  './mate-guard-reports/shard-2/evil.cjs',
  `../${path.basename(evil)}/evil.cjs`,
  path.join(evil, '.env'),
  './link/.env',
  `file://${EVIL}`,
  `data:text/javascript,${code}`,
  './setup.cjs',
  'test/a.spec.cjs',
  victim,
  `${victim}/x.xml`,
];
const NAMES = [
  '-e',
  '--eval',
  '-p',
  '--print',
  '-pe',
  '-ep',
  '--inspect',
  '--inspect-brk',
  '--inspect-brk-node',
  '--inspectBrk',
  '--debug',
  '-i',
  '--require',
  '-r',
  '--import',
  '--loader',
  '--env-file',
  '--config',
  '-c',
  '--preset',
  '--setupFiles',
  '--globalSetup',
  '--clearCache',
  '--cacheDirectory',
  '--outputFile',
  '--reporter-option',
  '-O',
  '-n',
  '--node-option',
  '--execArgv',
  '--file',
  '--spec',
  '--rootDir',
  '--selectProjects',
  '--project',
  '--grep',
  '-t',
  '--testNamePattern',
  '--unknown-thing',
  '--test-reporter-destination',
  '--reporter',
  '--reporters',
];

// mulberry32: small, seeded, well spread.
let seed = 48;
const rand = (n) => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) % n;
};
const pick = (xs) => xs[rand(xs.length)];
const piece = () => {
  switch (rand(9)) {
    case 0:
      return pick(PATHS);
    case 1:
      return `${pick(PATHS)},${pick(PATHS)}`; // a comma list
    case 2:
      return `${pick(['max-old-space-size=64', 'expose-gc', 'eval', 'inspect', 'require', 'import'])}=${pick([code, EVIL, '1'])}`;
    case 3:
      return code;
    case 4:
      return `${pick(['x', 'test/a.spec.cjs', EVIL])}${pick(ESC)}`;
    case 5:
      return JSON.stringify({ setupFiles: [EVIL], nested: { deeper: [[EVIL]] } });
    case 6:
      return `output=${pick(PATHS)}`;
    default:
      return pick(['1', 'spec', 'default', 'node', 'x', '^a$']);
  }
};
const argument = () => {
  const name = pick(NAMES);
  switch (rand(4)) {
    case 0:
      return [`${name}=${piece()}`];
    case 1:
      return [name, piece()];
    case 2:
      return [name];
    default:
      return [piece()];
  }
};
const testName = () => {
  const project = pick([
    '',
    '',
    `[${pick(NAMES)}=${pick(PATHS)}] `,
    `[${pick(NAMES)}] `,
    '[unit] ',
    `[${pick(ESC)}] `,
    `[-${piece()}] `,
  ]);
  const file = pick(['test/a.spec.cjs', 'test/a.spec.cjs', pick(PATHS), `-${pick(PATHS)}`]);
  return `${project}${file} > a > ${pick(['passes', piece()])}`;
};

/** A forged record and its events, at random. */
function record() {
  const runner = pick(Object.keys(ENTRY));
  const execArgv = Array.from({ length: rand(4) }, argument).flat();
  if (runner === 'node-test' && rand(2)) execArgv.push('--test');
  const argv = [
    rand(8) ? ENTRY[runner] : pick([EVIL, path.join(artifact, 'shard-2', 'node_modules', 'mocha', 'bin', 'mocha.js')]),
    ...Array.from({ length: rand(6) }, argument).flat(),
  ];
  if (rand(3) === 0) argv.push('--', ...argument());
  const cwd = pick([co, co, evil, path.join(artifact, 'shard-2'), '/ci/work/project', path.join(co, 'link')]);
  const tests = Array.from({ length: 1 + rand(3) }, testName);
  return { record: { tool: 'mate-guard', version: 1, runner, cwd, execArgv, argv, settings: {}, explicit: [] }, tests };
}

// Node's code and debugger flags (anywhere); a runner's code, debugger and output options (after its entry point).
const NODE_FORBIDDEN = /^(-e|-p|-pe|-ep|-i|--eval|--print|--inspect|--debug|--interactive)(=|$)/;
// After the entry point, short flags are the runner's own (mocha -p is --parallel, jest -e --expand): long forms only.
const RUNNER_CODE = /^(--eval|--print|--inspect|--debug|--interactive)/;
// Without --trust-record, no option a description lists as code, a debugger or an output comes back (under it, an option a
// runner does not know may: that is what it is for, names of code and debuggers apart).
const RUNNER_UNTRUSTED =
  /^(--clearCache|--preset|--setupFiles|--globalSetup|--cacheDirectory|--outputFile|--inspectBrk)(=|$)/;

/** Options whose value the runner's own description says loads nothing (a timeout, a pattern): such a value may say anything. */
const { NODE_OPTIONS } = await dist('core-native/dist/run/node-options.js');
// Spelled as replay matches them: `--testNamePattern` is `--test-name-pattern`.
const keyOf = (name) => (/^-[^-]/.test(name) ? name : name.replace(/^--/, '').toLowerCase().replace(/[-_]/g, ''));
const valueNames = (desc) =>
  new Set(
    desc.rows
      .filter(([kind]) => kind === 'value')
      .flatMap(([, names]) => names.split(/\s+/).filter(Boolean).map(keyOf)),
  );
const VALUE_NAMES = Object.fromEntries(
  Object.entries(SELECTIONS).map(([r, s]) => [r, new Set([...valueNames(s.options), ...valueNames(NODE_OPTIONS)])]),
);

/** What must hold of every planned command, whatever the record. */
function checkPlan(args, what, runner, trust) {
  const entry = args.findIndex((a) => path.isAbsolute(a) && a.includes('node_modules') && fs.existsSync(a));
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const name = a.split('=')[0];
    if (a.startsWith('-') && VALUE_NAMES[runner].has(keyOf(name))) {
      if (!a.includes('=')) i++;
      continue;
    }
    assert.ok(!a.includes(evil), `${what}: the attacker's folder reached the command: ${JSON.stringify(a)}`);
    assert.ok(
      !a.includes('mate-guard-reports'),
      `${what}: the artifact's tree reached the command: ${JSON.stringify(a)}`,
    );
    // (`link/x` bare is a package name to node and a pattern to Jest; as a path, ./link/x.)
    assert.ok(
      !/(^|[\s,=])\.\/link\//.test(a) && !a.includes(path.join(co, 'link/')),
      `${what}: a link out of the checkout reached the command: ${JSON.stringify(a)}`,
    );
    if (entry < 0 || i < entry)
      assert.doesNotMatch(a, NODE_FORBIDDEN, `${what}: code or a debugger: ${JSON.stringify(a)}`);
    if (entry >= 0 && i > entry)
      assert.doesNotMatch(a, RUNNER_CODE, `${what}: code or a debugger for the runner: ${JSON.stringify(a)}`);
    if (!trust)
      assert.doesNotMatch(
        a,
        RUNNER_UNTRUSTED,
        `${what}: the runner's code, debugger or output option: ${JSON.stringify(a)}`,
      );
    assert.doesNotMatch(a, /^--(selectProjects|project)=-/, `${what}: a project name read as an option`);
    assert.doesNotMatch(a, /^(file|data):/, `${what}: a module URL from the record`);
  }
}

test("3000 records of hostile pieces: every plan replay makes keeps out code, debuggers, the attacker's paths, the artifact and names as options", () => {
  let planned = 0;
  let refused = 0;
  for (let i = 0; i < 3000; i++) {
    const { record: rec, tests } = record();
    const trust = rand(2) === 0;
    const what = `record ${i} (${trust ? 'trusted' : 'plain'}): ${JSON.stringify({ ...rec, tests })}`;
    try {
      const ctx = trustContext(rec.cwd, co, reportDir, trust);
      const target = replayTarget(tests.map((t) => ({ tool: 'mate-guard', kind: 'heap-buffer-overflow', test: t })));
      const plan = runnerCommand(rec, SELECTIONS[rec.runner], ctx, target, 'replay.json');
      // The head is node's options and the entry point as installed here (under --trust-record, a recorded script is named, never from the attacker).
      checkPlan(plan.args, what, rec.runner, trust);
      planned++;
    } catch (err) {
      // A record replay will not run stops with a one-line error; anything else is a bug.
      assert.ok(err instanceof GuardConfigError, `${what}: ${err.stack}`);
      assert.doesNotMatch(err.message, /\x1b|\x9b/, what);
      refused++;
    }
  }
  assert.equal(fs.existsSync(marker), false);
  // Both outcomes are exercised: many records still replay (their harmless parts), many stop.
  assert.ok(planned > 300 && refused > 300, `planned ${planned}, refused ${refused}`);
});

test('a handful of them through the real mate replay (mocha records run; the others --dry-run): no marker, the victim survives', async () => {
  seed = 4848;
  let ran = 0;
  for (let i = 0; ran < 6 && i < 500; i++) {
    const { record: rec, tests } = record();
    if (rec.cwd !== co || rec.argv[0] !== ENTRY[rec.runner]) continue;
    const dir = fs.mkdtempSync(path.join(reportDir, 'run-'));
    fs.writeFileSync(
      path.join(dir, 'replay.json'),
      JSON.stringify({ ...rec, settings: { mode: 'tail', alignment: 16 } }),
    );
    tests.forEach((t, k) =>
      fs.writeFileSync(
        path.join(dir, `mate-guard-1-${k + 1}.json`),
        JSON.stringify({ tool: 'mate-guard', kind: 'heap-buffer-overflow', pid: 1, test: t }),
      ),
    );
    const dry = rec.runner !== 'mocha';
    const r = await run(
      process.execPath,
      [MATE, 'replay', dir, ...(dry ? ['--dry-run'] : []), ...(i % 2 ? ['--trust-record'] : [])],
      { cwd: co, timeout: 60_000 },
    );
    assert.notEqual(r.code, null, r.output); // ended, not killed
    assert.doesNotMatch(r.output, /\x1b|\x9b|TypeError|RangeError/, r.output);
    assert.equal(fs.existsSync(marker), false, r.output);
    assert.equal(fs.readFileSync(path.join(victim, 'keep.txt'), 'utf8'), 'keep');
    ran++;
  }
  assert.equal(ran, 6);
});
