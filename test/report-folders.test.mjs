// Report folders per user and per process: with no report directory given
// (installGuardAllocator alone, the Python library alone), a process files
// into a fresh folder of its own under <tmp>/mate-guard-<uid>/ (0700,
// owner and mode checked), removed at exit when clean. The old shared
// <tmp>/mate-guard-reports is never used: another local user can't plant
// links there for a root run to write through.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';

import { buildWheel, freshVenv, noPython } from './helpers/python.mjs';
import { ROOT, run } from './helpers/run.mjs';
import { buildFakeDriver, noGxx } from './helpers/sim.mjs';

const CORE = path.join(ROOT, 'packages', 'core-native');
const ADDON = path.join(ROOT, 'examples', 'addon');
const UID = process.getuid();

/** A node script that installs the guard allocator alone; `bad`: it damages a canary (reported at exit). */
const script = (bad) => `const { installGuardAllocator } = require(${JSON.stringify(CORE)});
installGuardAllocator();
const buf = Buffer.from(new ArrayBuffer(13)); // an ArrayBuffer keeps the alignment gap: canary damage, not a fault
${bad ? `require(${JSON.stringify(ADDON)}).writeAt(buf, buf.length + 1, 0x7a);` : ''}
console.log('done');
`;

/** A temporary folder like /tmp (sticky, open to all), where a test plays the other user. */
function sharedTmp() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-folders-'));
  fs.chmodSync(dir, 0o1777);
  return dir;
}

const node = (tmp, bad = false) => run(process.execPath, ['-e', script(bad)], { env: { TMPDIR: tmp } });

describe('installGuardAllocator with no report directory', () => {
  test('a clean process leaves nothing behind: its own folder under <tmp>/mate-guard-<uid>/ (0700) is gone at exit', async () => {
    const tmp = sharedTmp();
    const r = await node(tmp);
    assert.equal(r.code, 0, r.output);
    const parent = path.join(tmp, `mate-guard-${UID}`);
    assert.equal(fs.lstatSync(parent).mode & 0o777, 0o700);
    assert.deepEqual(fs.readdirSync(parent), []);
    assert.equal(fs.existsSync(path.join(tmp, 'mate-guard-reports')), false, 'the old shared folder is not used');
  });

  test('a process with a report keeps its folder, private, with the event in it', async () => {
    const tmp = sharedTmp();
    const r = await node(tmp, true);
    assert.equal(r.code, 1, r.output);
    assert.match(r.stderr, /==mate-guard== ERROR: canary-corruption/);
    const parent = path.join(tmp, `mate-guard-${UID}`);
    const [own] = fs.readdirSync(parent);
    assert.match(own, /^pid-\d+-/);
    assert.equal(fs.statSync(path.join(parent, own)).mode & 0o777, 0o700);
    assert.ok(fs.readdirSync(path.join(parent, own)).some((f) => /^mate-guard-\d+-\d+\.json$/.test(f)));
  });

  test("a per-user folder that is a link, open to others, or someone else's is refused, naming it; nothing is written", async () => {
    const tmp = sharedTmp();
    const parent = path.join(tmp, `mate-guard-${UID}`);
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-folders-elsewhere-'));
    fs.symlinkSync(elsewhere, parent);
    const link = await node(tmp);
    assert.notEqual(link.code, 0, link.output);
    assert.match(
      link.stderr,
      new RegExp(
        `mate-guard: ${parent.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is a link, not the folder mate-guard made for your reports: remove it, or give a report directory \\(MATE_GUARD_REPORT_DIR\\)`,
      ),
    );
    assert.deepEqual(fs.readdirSync(elsewhere), []);
    fs.unlinkSync(parent);
    fs.mkdirSync(parent);
    fs.chmodSync(parent, 0o777);
    const open = await node(tmp);
    assert.notEqual(open.code, 0, open.output);
    assert.match(open.stderr, /is open to other users \(mode 777; mate-guard makes it 0700\)/);
    assert.deepEqual(fs.readdirSync(parent), []);
  });
});

// The attack of issue 48, played for real where the machine allows it:
// another user (nobody) makes the per-user folder of root before root's
// run, world-writable, with links named like files root would write,
// pointing at a root-only file. Root's run refuses the folder; the file is untouched.
const asNobody = () => {
  if (UID !== 0) return 'needs root (to play a second user with setpriv)';
  try {
    execFileSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'true'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'setpriv --reuid=nobody does not work here';
  }
};

describe('the symlink race, as a second user', { skip: asNobody() }, () => {
  test("nobody plants <tmp>/mate-guard-0/ with links to a root-only file: root's run refuses it, the file is never written", async () => {
    const tmp = sharedTmp();
    const victim = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mate-folders-victim-')), 'secret');
    fs.writeFileSync(victim, 'root only\n', { mode: 0o600 });
    const parent = path.join(tmp, `mate-guard-${UID}`);
    const plant =
      `mkdir -m 0777 ${parent} && for i in $(seq 1 50); do ln -s ${victim} ${parent}/stats-$i-0.json; done` +
      ` && mkdir -m 0777 ${tmp}/mate-guard-reports && ln -s ${victim} ${tmp}/mate-guard-reports/stats-1-0.json`;
    execFileSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'sh', '-c', plant]);
    assert.notEqual(fs.statSync(parent).uid, 0, 'nobody made it');
    const r = await node(tmp);
    assert.notEqual(r.code, 0, r.output);
    assert.match(
      r.stderr,
      new RegExp(`mate-guard: ${parent.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} belongs to user \\d+, not you \\(0\\)`),
    );
    assert.equal(fs.readFileSync(victim, 'utf8'), 'root only\n');
    assert.equal(fs.statSync(victim).mode & 0o777, 0o600);
  });
});

describe('the Python library with no report directory (simulated CUDA driver)', { skip: noPython() || noGxx() }, () => {
  let python;
  let simEnv;
  before(() => {
    const fake = buildFakeDriver('mate-folders-sim-');
    simEnv = { MATE_GUARD_CUDA_DRIVER: fake, MATE_GUARD_CUPTI: fake };
    python = freshVenv('mate-folders-py-', ['--no-index', buildWheel(path.dirname(fake))]);
  });

  test("python -m mate_guard: an overrun is reported from the library's own folder under <tmp>/mate-guard-<uid>/, kept; a refused parent stops it", async () => {
    const tmp = sharedTmp();
    const FIX = path.join(ROOT, 'test', 'fixtures', 'python');
    const r = await run(
      python,
      ['-m', 'mate_guard', '--mode', 'tail', '--sync-on-free', path.join(FIX, 'script_overrun.py')],
      { cwd: tmp, env: { ...simEnv, TMPDIR: tmp } },
    );
    assert.match(
      r.stderr,
      /==mate-guard== ERROR: canary-corruption: 1 byte past the end of allocation #1 \(100 bytes, tail mode\) damaged/,
      r.output,
    );
    const parent = path.join(tmp, `mate-guard-${UID}`);
    assert.equal(fs.statSync(parent).mode & 0o777, 0o700);
    const [own] = fs.readdirSync(parent);
    assert.ok(
      fs.readdirSync(path.join(parent, own)).some((f) => /^mate-guard-\d+-\d+\.json$/.test(f)),
      r.output,
    );

    const open = sharedTmp();
    fs.mkdirSync(path.join(open, `mate-guard-${UID}`), { mode: 0o777 });
    fs.chmodSync(path.join(open, `mate-guard-${UID}`), 0o777);
    const refused = await run(python, ['-m', 'mate_guard', path.join(FIX, 'script_overrun.py')], {
      cwd: open,
      env: { ...simEnv, TMPDIR: open },
    });
    assert.notEqual(refused.code, 0, refused.output);
    assert.match(refused.stderr, /is open to other users \(mate-guard makes it 0700\)/);
  });
});
