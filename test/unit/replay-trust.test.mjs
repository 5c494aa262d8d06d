// What `mate replay` takes from a record's command line (a report
// directory is data from wherever the run happened): harmless options are
// taken, code, debuggers and paths from elsewhere never are, an unknown
// option only under --trust-record; every left-out piece is named.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/run.mjs';

const { judgeArgs, assemble, trustContext } = await import(
  path.join(ROOT, 'packages/core-native/dist/run/replay-trust.js')
);
const { NODE_OPTIONS, NODE_TEST_OPTIONS } = await import(
  path.join(ROOT, 'packages/core-native/dist/run/node-options.js')
);
// Each runner's options, as its own package describes them.
const SURFACES = {
  node: NODE_OPTIONS,
  'node-test': NODE_TEST_OPTIONS,
  mocha: (await import(path.join(ROOT, 'packages/mocha-plugin/dist/runner/options.js'))).options,
  jest: (await import(path.join(ROOT, 'packages/jest-env/dist/runner/options.js'))).options,
  vitest: (await import(path.join(ROOT, 'packages/vitest-plugin/dist/runner/options.mjs'))).options,
};
const replayDir = (recorded, here, reportDir) => {
  const { cwd, note } = trustContext(recorded, here, reportDir, false);
  return note ? { cwd, note } : { cwd };
};

const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mate-trust-project-')));
fs.writeFileSync(path.join(project, 'jest.config.js'), 'module.exports = {};\n');
fs.mkdirSync(path.join(project, 'reports'));
fs.mkdirSync(path.join(project, 'test'));
fs.writeFileSync(path.join(project, 'test', 'a.spec.js'), '');
fs.writeFileSync(path.join(project, 'a.test.mjs'), '');
/** A package installed in the project: `files` under its directory, `pkg` its package.json. */
function install(name, pkg, files) {
  const dir = path.join(project, 'node_modules', name);
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), text);
  }
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, ...pkg }));
}
install(
  'tsx',
  { exports: { '.': './index.cjs', './esm': { import: './esm.mjs' } } },
  { 'index.cjs': '', 'esm.mjs': '' },
);
install('jest-junit', { main: 'index.js' }, { 'index.js': '', 'lib/util.js': '' });
// A package whose entry point is its program (pnpm's main is bin/pnpm.cjs): loaded, it reads the runner's arguments as its own.
install('a-cli', { main: 'bin/cli.cjs', bin: { 'a-cli': 'bin/cli.cjs' } }, { 'bin/cli.cjs': '' });
const ctx = {
  cwd: project,
  root: project,
  reportDir: path.join(project, 'reports'),
  artifact: path.join(project, 'reports'),
  trust: false,
};
const judge = (args, surface, trust = false) => judgeArgs(args, SURFACES[surface], { ...ctx, trust });

test('harmless node options are taken; -e, --print, an --import of data:, a --require from elsewhere and --inspect never are', () => {
  const j = judge(
    [
      '--expose-gc',
      '--max-old-space-size=4096',
      '--require',
      './setup.js',
      '--import',
      'tsx',
      '--conditions',
      'development',
      '-e',
      "require('fs').writeFileSync('/tmp/x', '')",
      '--print=1',
      '--import',
      'data:text/javascript,process.exit(3)',
      '--require',
      '/elsewhere/x.js',
      '--require=../x.js',
      '--loader',
      'file:///elsewhere/loader.mjs',
      '--inspect-brk',
      '--inspect-port',
      '9229',
    ],
    'node',
    true,
  );
  assert.deepEqual(j.options, [
    ['--expose-gc'],
    ['--max-old-space-size=4096'],
    ['--require', './setup.js'],
    ['--import', 'tsx'],
    ['--conditions', 'development'],
  ]);
  assert.deepEqual(j.leftOut, [
    `-e 'require('\\''fs'\\'').writeFileSync('\\''/tmp/x'\\'', '\\'''\\'')' (code from the record)`,
    '--print=1 (code from the record)',
    "--import 'data:text/javascript,process.exit(3)' (code from the record)",
    `--require /elsewhere/x.js (outside ${project})`,
    `--require=../x.js (outside ${project})`,
    `--loader file:///elsewhere/loader.mjs (outside ${project})`,
    '--inspect-brk (a debugger)',
    '--inspect-port 9229 (a debugger)',
  ]);
  assert.deepEqual(j.trusted, [], '--trust-record brings none of them back');
});

test('a package name that climbs out of node_modules, and a path into the report directory, are not loaded', () => {
  const j = judge(['-r', 'pkg/../../../../tmp/evil', '--import', './reports/evil.mjs'], 'node');
  assert.deepEqual(j.options, []);
  assert.deepEqual(j.leftOut, [
    '-r pkg/../../../../tmp/evil (not a package name or a path)',
    '--import ./reports/evil.mjs (in the report directory)',
  ]);
});

test('a package is loaded as what it offers (its entry point, its exports), not as a program, a file deep inside it, or one not installed here', () => {
  const args = [
    '--import',
    'tsx',
    '--import',
    'tsx/esm',
    '-r',
    'a-cli',
    '-r',
    'jest-junit/lib/util.js',
    '-r',
    'tsx/secret',
    '-r',
    'not-here',
  ];
  const j = judge(args, 'node');
  assert.deepEqual(j.options, [
    ['--import', 'tsx'],
    ['--import', 'tsx/esm'],
  ]);
  assert.deepEqual(j.leftOut, [
    "-r a-cli (a-cli's program (its bin), not a module: --trust-record takes it)",
    '-r jest-junit/lib/util.js (a file inside jest-junit, not what it exports: --trust-record takes it)',
    '-r tsx/secret (a file inside tsx, not what it exports: --trust-record takes it)',
    `-r not-here (not installed in ${project}: --trust-record takes it)`,
  ]);
  const trusted = judge(args, 'node', true);
  assert.equal(trusted.options.length, 6);
  assert.deepEqual(trusted.trusted, ['-r a-cli', '-r jest-junit/lib/util.js', '-r tsx/secret', '-r not-here']);
});

test('an option replay does not know is left out with its value, and taken only under --trust-record', () => {
  const plain = judge(['--reporter-option', 'maxDiffSize=100', '--grep', 'x'], 'mocha');
  assert.deepEqual(plain.options, [['--grep', 'x']]);
  assert.deepEqual(plain.leftOut, [
    '--reporter-option maxDiffSize=100 (not a mocha argument replay knows: --trust-record takes it)',
  ]);
  const trusted = judge(['--reporter-option', 'maxDiffSize=100', '--grep', 'x'], 'mocha', true);
  assert.deepEqual(trusted.options, [
    ['--reporter-option', 'maxDiffSize=100'],
    ['--grep', 'x'],
  ]);
  assert.deepEqual(trusted.trusted, ['--reporter-option maxDiffSize=100']);
});

test("mocha: a node option handed on is judged as node's; `inspect` starts no debugger; a value that is an option is not swallowed", () => {
  const j = judge(
    [
      '-n',
      'expose-gc',
      '--node-option',
      'eval=process.exit(3)',
      'inspect',
      '--grep',
      '--require=/elsewhere/x.js',
      '--no-colors',
      '--eval',
      'x',
    ],
    'mocha',
  );
  assert.deepEqual(j.options, [['-n', 'expose-gc'], ['--no-colors']]);
  assert.deepEqual(j.leftOut, [
    "--node-option 'eval=process.exit(3)' (code from the record)",
    'inspect (a debugger)',
    '--grep (no value)',
    `--require=/elsewhere/x.js (outside ${project})`,
    '--eval x (code from the record)',
  ]);
});

test('positionals (files, globs) stay inside the directory; they come before options, where no array option can swallow one', () => {
  const j = judge(
    [
      'test/a.spec.js',
      'test/**/*.spec.js',
      '../other/a.spec.js',
      '/etc/passwd',
      '{../../x,test}/*.js',
      '--require',
      './a.js',
    ],
    'mocha',
  );
  assert.deepEqual(j.positionals, ['test/a.spec.js', 'test/**/*.spec.js']);
  // mocha splits a spec on commas: each part is judged alone.
  assert.deepEqual(
    j.leftOut.map((l) => l.replace(/ \(.*/, '')),
    ['../other/a.spec.js', '/etc/passwd', "'{../../x'", "'test}/*.js'"],
  );
  assert.deepEqual(assemble(j, SURFACES.mocha), ['test/a.spec.js', 'test/**/*.spec.js', '--require', './a.js']);
  // node reads options before the first file.
  const n = judge(['a.test.mjs', '--test-reporter=spec'], 'node-test');
  assert.deepEqual(assemble(n, SURFACES['node-test']), ['--test-reporter=spec', 'a.test.mjs']);
});

test('nothing in node_modules is loaded by path: not a file there, nor a glob or directory whose files reach into it (mocha loads every spec it finds)', () => {
  fs.mkdirSync(path.join(project, 'test', 'unit'), { recursive: true });
  const j = judge(
    [
      'test/**/*.spec.js',
      'test',
      '*.spec.js',
      '.',
      '**/*.cjs',
      '*/*/bin/*.cjs',
      'node_modules/a-cli/bin/cli.cjs',
      '--spec',
      'node_modules/**',
      '--file',
      './node_modules/a-cli/bin/cli.cjs',
      '-r',
      './node_modules/a-cli/bin/cli.cjs',
    ],
    'mocha',
  );
  assert.deepEqual(j.positionals, ['test/**/*.spec.js', 'test', '*.spec.js']);
  assert.deepEqual(j.options, []);
  assert.deepEqual(j.leftOut, [
    '. (reaches into node_modules)',
    "'**/*.cjs' (reaches into node_modules)",
    "'*/*/bin/*.cjs' (reaches into node_modules)",
    'node_modules/a-cli/bin/cli.cjs (inside node_modules)',
    "--spec 'node_modules/**' (inside node_modules)",
    '--file ./node_modules/a-cli/bin/cli.cjs (inside node_modules)',
    '-r ./node_modules/a-cli/bin/cli.cjs (inside node_modules)',
  ]);
  // Jest and Vitest positionals are patterns over the files their config includes (node_modules is not): only where they point is judged.
  assert.deepEqual(judge(['.*\\.test\\.js$', 'gap-overflow'], 'jest').positionals, ['.*\\.test\\.js$', 'gap-overflow']);
});

test('jest: a config must be a file here (a JSON string could name setup files from elsewhere); reporters are built-ins or packages', () => {
  const j = judge(
    [
      '-c',
      'jest.config.js',
      '--config',
      '{"setupFiles":["/elsewhere/x.js"]}',
      '--reporters',
      'default',
      '--reporters',
      'jest-junit',
      '--reporters',
      '/elsewhere/r.js',
      '--testNamePattern',
      '^a$',
      '--rootDir',
      '/',
    ],
    'jest',
  );
  assert.deepEqual(j.options, [
    ['-c', 'jest.config.js'],
    ['--reporters', 'default'],
    ['--reporters', 'jest-junit'],
    ['--testNamePattern', '^a$'],
  ]);
  assert.deepEqual(j.leftOut, [
    `--config '{"setupFiles":["/elsewhere/x.js"]}' (not a path)`,
    `--reporters /elsewhere/r.js (outside ${project})`,
    `--rootDir / (outside ${project})`,
  ]);
});

test('vitest: --execArgv is judged as a node option; a report file is not written (the replay prints to the terminal)', () => {
  const j = judge(
    [
      'run',
      '--execArgv=--expose-gc',
      '--execArgv=--eval=1',
      '--outputFile.junit=junit.xml',
      '--reporter=junit',
      '--inspect-brk',
    ],
    'vitest',
  );
  assert.deepEqual(j.positionals, ['run']);
  assert.deepEqual(j.options, [['--execArgv=--expose-gc'], ['--reporter=junit']]);
  assert.deepEqual(j.leftOut, [
    '--execArgv=--eval=1 (code from the record)',
    '--outputFile.junit=junit.xml (a file the run would write)',
    '--inspect-brk (a debugger)',
  ]);
});

test("the replay's directory: the recorded one only where it is this one or under it", () => {
  const sub = path.join(project, 'packages', 'a');
  fs.mkdirSync(sub, { recursive: true });
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-trust-elsewhere-'));
  assert.deepEqual(replayDir(sub, project, ctx.reportDir), { cwd: sub });
  assert.deepEqual(replayDir(elsewhere, project, ctx.reportDir), {
    cwd: project,
    note: `recorded in ${elsewhere}, which is not in ${project}: replaying here`,
  });
  assert.deepEqual(replayDir('/ci/work/project', project, ctx.reportDir), {
    cwd: project,
    note: `recorded in /ci/work/project, which is not here: replaying in ${project}`,
  });
  assert.deepEqual(replayDir(ctx.reportDir, project, ctx.reportDir).cwd, project, 'never inside the report directory');
  assert.deepEqual(
    replayDir(path.join(project, 'node_modules', 'a-cli'), project, ctx.reportDir).cwd,
    project,
    'never inside node_modules',
  );
  assert.throws(
    () => replayDir(project, ctx.reportDir, ctx.reportDir),
    /run it from the project's checkout, not from inside the report directory/,
  );
});
