// `mate replay` on artifacts an attacker wrote (a CI artifact from a fork's
// pull request): one test per attack of issue 48, each a forged report
// directory given to the real `mate replay`. Whatever the record asks for,
// the attacker's marker file is never created and the victim folder
// survives; what was left out is named.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { MATE, ROOT, run } from './helpers/run.mjs';

const PKG = path.join(ROOT, 'packages');
const MATE_MOCHA = path.join(PKG, 'mocha-plugin', 'bin', 'mate-mocha.js');
const MATE_JEST = path.join(PKG, 'jest-env', 'bin', 'mate-jest.js');
const MATE_VITEST = path.join(PKG, 'vitest-plugin', 'bin', 'mate-vitest.mjs');
const OVERFLOW = 'examples/mocha/overflow.spec.cjs > overflow by one > fills a 64-byte buffer';
const JEST_TEST = 'examples/jest/gap-overflow.test.js > writeAt > writes the last byte of a 13-byte record';

const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const tmp = (prefix) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));

/** A folder elsewhere: a program that leaves a marker when it runs, and a victim folder that must survive. */
function attacker() {
  const dir = tmp('mate-attack-');
  const marker = path.join(dir, 'ran');
  const code = `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`;
  const script = path.join(dir, 'evil.cjs');
  fs.writeFileSync(script, `${code};\n`);
  const victim = path.join(dir, 'victim');
  fs.mkdirSync(victim);
  fs.writeFileSync(path.join(victim, 'keep.txt'), 'keep');
  return { dir, marker, code, script, victim };
}

/** What must hold after any replay of a forged artifact. */
function unharmed(a, r) {
  assert.equal(fs.existsSync(a.marker), false, `the attacker's code ran:\n${r?.output ?? ''}`);
  assert.equal(fs.readFileSync(path.join(a.victim, 'keep.txt'), 'utf8'), 'keep', 'the victim folder survives');
  assert.doesNotMatch(r?.output ?? '', /\x1b/, 'no escape sequence reaches the terminal');
}

/** A forged run directory: its record and one violation event per test path. `at`: where it is unpacked. */
function forge({ runner, argv, execArgv = [], cwd = ROOT, tests = [OVERFLOW], at = tmp('mate-forged-'), runInfo }) {
  fs.mkdirSync(at, { recursive: true });
  fs.writeFileSync(
    path.join(at, 'replay.json'),
    JSON.stringify({
      tool: 'mate-guard',
      version: 1,
      runner,
      cwd,
      execArgv,
      argv,
      settings: { mode: 'tail', alignment: 16 },
      explicit: [],
    }),
  );
  tests.forEach((test, i) =>
    fs.writeFileSync(
      path.join(at, `mate-guard-4242-${i + 1}.json`),
      JSON.stringify({
        tool: 'mate-guard',
        kind: 'heap-buffer-overflow',
        pid: 4242,
        test,
      }),
    ),
  );
  if (runInfo)
    fs.writeFileSync(
      path.join(at, 'run.json'),
      JSON.stringify({ tool: 'mate-guard', pid: 4242, started: '', suppressions: null, ...runInfo }),
    );
  return at;
}

const replay = (args, opts = {}) =>
  run(process.execPath, [MATE, 'replay', ...args], { cwd: ROOT, timeout: 90_000, ...opts });

/**
 * A checkout of its own in the temporary directory (links and artifacts
 * can be planted in it): a passing mocha spec, and node_modules linked to
 * this repository's (its runner and mate-mocha).
 */
function checkout() {
  const dir = tmp('mate-checkout-');
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  fs.mkdirSync(path.join(dir, 'test'));
  fs.writeFileSync(path.join(dir, 'test', 'a.spec.cjs'), "describe('a', () => { it('passes', () => {}); });\n");
  fs.writeFileSync(path.join(dir, 'setup.cjs'), '');
  return dir;
}
const SPEC = 'test/a.spec.cjs > a > passes';

describe('mate replay of a forged artifact: a test or project name never becomes an option', () => {
  test('jest: projects named [--cacheDirectory=<victim>] and [--clearCache] run nothing: each test is named, the replay stops (exit 2)', async () => {
    const a = attacker();
    const dir = forge({
      runner: 'jest',
      argv: [MATE_JEST, '-c', 'examples/jest/jest.config.js'],
      tests: [`[--cacheDirectory=${a.victim}] ${JEST_TEST}`, `[--clearCache] ${JEST_TEST}`],
    });
    const r = await replay([dir]);
    assert.equal(r.code, 2, r.output);
    assert.match(
      r.stderr,
      /^mate: replay: .*replay\.json names no failing test that replay runs here: .*\[--clearCache\].*\(a test whose project name reads as an option\)$/m,
    );
    assert.doesNotMatch(r.stderr, /replay runs in/);
    unharmed(a, r);
  });

  test('jest: [--preset=<file elsewhere>] beside a real project name: the hostile one is left out, the other is passed as --selectProjects=<name>', async () => {
    const a = attacker();
    const dir = forge({
      runner: 'jest',
      argv: [MATE_JEST, '-c', 'examples/jest/jest.config.js'],
      tests: [`[--preset=${a.script}] ${JEST_TEST}`, `[unit] ${JEST_TEST}`],
    });
    const r = await replay([dir, '--dry-run']);
    assert.equal(r.code, 0, r.output);
    assert.match(r.stderr, /left out of the replay: .*\[--preset=.*\(a test whose project name reads as an option\)/);
    assert.match(r.stderr, /^\[mate-guard\] replay runs in .* --selectProjects=unit$/m);
    assert.doesNotMatch(
      r.stderr.split('\n').find((l) => l.includes('replay runs in')),
      /preset/,
    );
    unharmed(a, r);
  });

  test('vitest: a project named [--config=<file elsewhere>] never reaches --project', async () => {
    const a = attacker();
    const dir = forge({
      runner: 'vitest',
      cwd: path.join(ROOT, 'examples', 'vitest'),
      argv: [MATE_VITEST, 'run'],
      tests: [`[--config=${a.script}] alignment-gap.test.mjs > alignment gap > x`],
    });
    const r = await replay([dir], { cwd: ROOT });
    assert.equal(r.code, 2, r.output);
    assert.match(
      r.stderr,
      /names no failing test that replay runs here: .*\(a test whose project name reads as an option\)/,
    );
    unharmed(a, r);
  });
});

describe('mate replay of a forged artifact: each argument is judged as the runner parses it', () => {
  test('mocha -n splits on commas: "max-old-space-size=4096,eval=<code>" passes the first, never the eval; the test still reproduces', async () => {
    const a = attacker();
    const dir = forge({
      runner: 'mocha',
      argv: [MATE_MOCHA, '-n', `max-old-space-size=4096,eval=${a.code}`, 'examples/mocha/overflow.spec.cjs'],
    });
    const r = await replay([dir]);
    assert.equal(r.code, 139, r.output);
    assert.match(r.stderr, /left out of the replay: -n 'eval=require.*' \(code from the record\)/);
    assert.match(
      r.stderr,
      /^\[mate-guard\] replay runs in .* examples\/mocha\/overflow\.spec\.cjs -n max-old-space-size=4096 --grep /m,
    );
    assert.match(r.output, /==mate-guard== ERROR: heap-buffer-overflow/);
    unharmed(a, r);
  });

  test("mocha --require and a spec split on commas: the element from elsewhere is left out, the checkout's kept", async () => {
    const a = attacker();
    const co = checkout();
    const dir = forge({
      runner: 'mocha',
      cwd: co,
      argv: [MATE_MOCHA, '--require', `./setup.cjs,${a.script}`, `test/a.spec.cjs,${a.script}`],
      tests: [SPEC],
    });
    const r = await replay([dir], { cwd: co });
    assert.equal(r.code, 0, r.output);
    assert.match(
      r.stderr,
      new RegExp(
        `left out of the replay: --require ${esc(a.script)} \\(outside ${co}\\), ${esc(a.script)} \\(outside ${co}\\)$`,
        'm',
      ),
    );
    assert.match(r.stderr, /^\[mate-guard\] replay runs in .* test\/a\.spec\.cjs --require \.\/setup\.cjs --grep /m);
    assert.match(r.output, /1 passing/);
    unharmed(a, r);
  });
});

describe("mate replay of a forged artifact: paths are the checkout's, after links, and never the artifact's", () => {
  test('a link inside the checkout to a folder elsewhere: --require ./link/x and mocha --file ./link/x are left out (links resolved)', async () => {
    const a = attacker();
    const co = checkout();
    fs.symlinkSync(a.dir, path.join(co, 'link'));
    const dir = forge({
      runner: 'mocha',
      cwd: co,
      argv: [MATE_MOCHA, '--require', './link/evil.cjs', '--file', './link/evil.cjs', 'test/a.spec.cjs'],
      tests: [SPEC],
    });
    const r = await replay([dir], { cwd: co });
    assert.equal(r.code, 0, r.output);
    assert.match(
      r.stderr,
      /left out of the replay: --require \.\/link\/evil\.cjs \(a link to .*evil\.cjs, outside .*\), --file \.\/link\/evil\.cjs \(a link to .*, outside .*\)/,
    );
    assert.match(r.output, /1 passing/);
    unharmed(a, r);
  });

  test("an artifact unpacked inside the checkout: another shard's file, a cwd in it with its own node_modules, an --env-file from it: none is used", async () => {
    const a = attacker();
    const co = checkout();
    // The artifact's folder in the checkout: shard-1 (replayed) and shard-2 (files of the attacker's choosing).
    const shard2 = path.join(co, 'mate-guard-reports', 'shard-2');
    fs.mkdirSync(path.join(shard2, 'node_modules', 'mocha', 'bin'), { recursive: true });
    fs.copyFileSync(a.script, path.join(shard2, 'evil.cjs'));
    fs.writeFileSync(
      path.join(shard2, 'node_modules', 'mocha', 'package.json'),
      JSON.stringify({ name: 'mocha', bin: { mocha: './bin/mocha.js' } }),
    );
    fs.copyFileSync(a.script, path.join(shard2, 'node_modules', 'mocha', 'bin', 'mocha.js'));
    fs.writeFileSync(path.join(shard2, '.env'), `NODE_OPTIONS="--require ${a.script}"\n`);
    const dir = forge({
      runner: 'mocha',
      at: path.join(co, 'mate-guard-reports', 'shard-1', 'run'),
      cwd: shard2,
      execArgv: ['--env-file', './mate-guard-reports/shard-2/.env'],
      argv: [
        path.join(shard2, 'node_modules', 'mocha', 'bin', 'mocha.js'),
        '--require',
        '@mate-guard/mocha',
        '--require',
        './mate-guard-reports/shard-2/evil.cjs',
        'test/a.spec.cjs',
      ],
      tests: [SPEC],
    });
    const r = await replay([dir], { cwd: co });
    assert.equal(r.code, 0, r.output);
    assert.match(r.stderr, new RegExp(`\\(recorded in ${shard2}, which is not in ${co}: replaying here\\)`));
    assert.match(r.stderr, /--env-file \.\/mate-guard-reports\/shard-2\/\.env \(in the report directory\)/);
    assert.match(r.stderr, /--require \.\/mate-guard-reports\/shard-2\/evil\.cjs \(in the report directory\)/);
    // The checkout's own mocha, not the one in the artifact.
    assert.match(
      r.stderr,
      new RegExp(
        `replay runs in ${co}: \\S+ ${esc(path.join(co, 'node_modules', 'mocha', 'bin', 'mocha.js'))} test/a\\.spec\\.cjs --require @mate-guard/mocha --grep `,
      ),
    );
    assert.match(r.output, /1 passing/);
    unharmed(a, r);
  });

  test('--env-file must be a real file of the checkout: a link to one elsewhere is left out', async () => {
    const a = attacker();
    const co = checkout();
    fs.writeFileSync(path.join(a.dir, '.env'), `NODE_OPTIONS="--require ${a.script}"\n`);
    fs.symlinkSync(path.join(a.dir, '.env'), path.join(co, '.env'));
    const dir = forge({
      runner: 'mocha',
      cwd: co,
      execArgv: ['--env-file=.env'],
      argv: [MATE_MOCHA, 'test/a.spec.cjs'],
      tests: [SPEC],
    });
    const r = await replay([dir], { cwd: co });
    assert.equal(r.code, 0, r.output);
    assert.match(r.stderr, /left out of the replay: --env-file=\.env \(a link to .*\.env, outside .*\)/);
    unharmed(a, r);
  });

  test("the runner's selection is never loaded from a node_modules above the checkout: the one next to this mate is, and says so first", async () => {
    const a = attacker();
    const parent = tmp('mate-parent-');
    const evil = path.join(parent, 'node_modules', '@mate-guard', 'mocha');
    fs.mkdirSync(evil, { recursive: true });
    fs.writeFileSync(
      path.join(evil, 'package.json'),
      JSON.stringify({
        name: '@mate-guard/mocha',
        mateGuard: { runner: 'mocha' },
        exports: { './adapter': './sel.cjs' },
        bin: { 'mate-mocha': './sel.cjs' },
      }),
    );
    fs.copyFileSync(a.script, path.join(evil, 'sel.cjs'));
    const co = path.join(parent, 'checkout');
    fs.mkdirSync(path.join(co, 'test'), { recursive: true });
    fs.writeFileSync(path.join(co, 'test', 'a.spec.cjs'), '');
    const dir = forge({ runner: 'mocha', cwd: co, argv: [MATE_MOCHA, 'test/a.spec.cjs'], tests: [SPEC] });
    const r = await replay([dir, '--dry-run'], { cwd: co });
    assert.equal(r.code, 0, r.output);
    const lines = r.stderr.split('\n');
    assert.match(lines[0], /^\[mate-guard\] replaying test test\/a\.spec\.cjs > a > passes \(mocha\)/);
    assert.match(
      lines[1],
      new RegExp(
        `^\\[mate-guard\\] mocha's options and test selection from ${esc(ROOT)}/node_modules/@mate-guard/mocha/dist/selection\\.js \\(outside the checkout\\)$`,
      ),
    );
    assert.match(
      r.stderr,
      new RegExp(
        `replay runs in ${co}: \\S+ ${esc(path.join(ROOT, 'node_modules', '@mate-guard', 'mocha', 'bin', 'mate-mocha.js'))} `,
      ),
    );
    unharmed(a, r);
  });
});

describe('mate replay --trust-record: the only way to run unknown options, never code, debuggers or paths from elsewhere', () => {
  test('-pe <code>, --inspect-brk-node, --setupFiles=<elsewhere>, --reporter-option output=<elsewhere> stay out; a harmless unknown option is taken and shown', async () => {
    const a = attacker();
    const dir = forge({
      runner: 'mocha',
      execArgv: ['-pe', a.code, '--inspect-brk-node'],
      argv: [
        MATE_MOCHA,
        '--reporter-option',
        `output=${a.victim}/x.xml`,
        `--setupFiles=${a.script}`,
        '--reporter-option',
        'maxDiffSize=100',
        'examples/mocha/overflow.spec.cjs',
      ],
    });
    const r = await replay([dir, '--trust-record']);
    assert.equal(r.code, 139, r.output);
    assert.match(
      r.stderr,
      /left out of the replay: -pe .* \(a short option replay does not know, where node reads -pe as -p -e\), --inspect-brk-node \(a debugger or code\)/,
    );
    assert.match(r.stderr, /--reporter-option output=\S+ \(\S+ is outside /);
    assert.match(r.stderr, /--setupFiles=\S+ \(\S+ is outside /);
    assert.match(r.stderr, /^\[mate-guard\] taken as recorded \(--trust-record\): --reporter-option maxDiffSize=100$/m);
    assert.match(r.stderr, /^\[mate-guard\] replay runs in .* --reporter-option maxDiffSize=100 --grep /m);
    unharmed(a, r);
  });

  test('vitest --inspect-brk-node and --execArgv=-pe never come back, even trusted', async () => {
    const a = attacker();
    const dir = forge({
      runner: 'vitest',
      cwd: path.join(ROOT, 'examples', 'vitest'),
      argv: [MATE_VITEST, 'run', '--inspect-brk-node', `--execArgv=-pe`, '--unknownThing=1'],
      tests: ['alignment-gap.test.mjs > alignment gap > x'],
    });
    const r = await replay([dir, '--trust-record', '--dry-run']);
    assert.equal(r.code, 0, r.output);
    const runs = r.stderr.split('\n').find((l) => l.includes('replay runs in'));
    assert.doesNotMatch(runs, /inspect|-pe/);
    assert.match(runs, /--unknownThing=1/);
    unharmed(a, r);
  });
});

describe('what replay and the CLIs print from an artifact is shown, never obeyed by the terminal', () => {
  test('escape sequences in a test name, an argument and a refused script are spelled out; the command is shown as bash reads it back', async () => {
    const a = attacker();
    const hidden = `x\x1b]0;pwned\x07\x1b[2K\u202e`;
    const dir = forge({
      runner: 'mocha',
      argv: [MATE_MOCHA, '--grep', hidden, 'examples/mocha/overflow.spec.cjs'],
      tests: [`${OVERFLOW}${hidden}`],
    });
    const r = await replay([dir, '--dry-run']);
    assert.equal(r.code, 0, r.output);
    assert.match(r.stderr, /x\\x1b\]0;pwned\\x07\\x1b\[2K\\u202e/);
    unharmed(a, r);
    const script = forge({ runner: 'mocha', argv: [`${a.script}\x1b[8m`, 'x'] });
    const refused = await replay([script]);
    assert.equal(refused.code, 2, refused.output);
    assert.match(refused.stderr, /says the run started ".*evil\.cjs\\u001b\[8m"/);
    unharmed(a, refused);
  });

  test('a replay.json that is not JSON: the error quotes it with its control characters shown', async () => {
    const dir = tmp('mate-forged-');
    fs.writeFileSync(path.join(dir, 'replay.json'), '{"tool": \x1b[31m\x9b2J');
    const r = await replay([dir]);
    assert.equal(r.code, 2, r.output);
    assert.match(r.stderr, /is not a run record: /);
    assert.doesNotMatch(r.output, /[\x1b\x9b]/);
  });

  test("mate report: run.json's runner and a stats file's reason names are escaped in the summary (a newline there starts no second line)", async () => {
    const dir = forge({
      runner: 'mocha',
      argv: [MATE_MOCHA],
      tests: [],
      runInfo: { runner: 'jest\n::error::forged\x1b[31m' },
    });
    fs.writeFileSync(
      path.join(dir, 'stats-4242-0.json'),
      JSON.stringify({ pid: 4242, guarded: 1, fallbacks: 2, fallbackReasons: { 'it was\x1b[2Jred\n::error::x': 2 } }),
    );
    const r = await run(process.execPath, [MATE, 'report', dir]);
    assert.doesNotMatch(r.output, /\x1b/);
    assert.doesNotMatch(r.output, /^::error::/m);
    assert.match(r.output, /merged 1 report directory \(1 jest\\x0a::error::forged\\x1b\[31m\)/);
    assert.match(r.output, /2 because it was\\x1b\[2Jred\\x0a::error::x/);
    // In a GitHub workflow, a newline there would start a command line of its own.
    const gh = await run(process.execPath, [MATE, 'report', dir, '--format', 'github']);
    assert.doesNotMatch(gh.output, /^::error::(forged|x)/m, gh.output);
    assert.doesNotMatch(gh.output, /\x1b/);
  });
});
