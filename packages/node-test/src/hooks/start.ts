// What loading the plugin does, once per process, before any test file
// loads: decide this process's role and settings, own the run in the
// process that starts it (unless mate-node-test or guard-run does), install
// the allocator where tests run and bracket each test, and in node --test's
// main process name the tests of files whose process a guard fault killed.
import {
  GuardedRun,
  installFromSettings,
  markTestsStarted,
  outsideTestsError,
  readHandoff,
  runOwnership,
  takeOutsideDamage,
  NODE_ARGS,
  watchRequested,
  type GuardSettings,
  type RunnerResolution,
} from '@mate-guard/core/internal';

import { crashedTestsOfFile } from '../reporter/crashed-tests';
import { endRunAtExit, PROCESS_LABEL } from '../reporter/run-end';
import { endEachWatchRound } from '../reporter/watch-rounds';
import { aroundTest } from './bracket';
import { checkNodeVersion } from './node-version';
import { nodeTestRole, runsTests, type NodeTestRole } from './role';
import { resolveNodeTestConfig } from './settings';
import { getState, setState, type PluginState } from './state';
import { aroundEveryTestFunction, kindOf, onRootTest } from './test-class';

interface Decision {
  role: NodeTestRole;
  settings: GuardSettings;
  /** This process owns the run: it makes the report directory and prints the summary. */
  owner: boolean;
  explicit?: RunnerResolution['explicit'];
}

const PER_FILE_NOTE =
  "[mate-guard] note: this summary covers this test file only: node --test's main process did not load @mate-guard/node-test " +
  "(Node 20 loads --import modules in the test files' processes only); preload it with --require @mate-guard/node-test, or run mate-node-test, for one summary and crashed tests named in the results\n";

function decide(): Decision {
  const role = nodeTestRole();
  // A test file's process may own a run only where nothing was handed to it:
  // node --test's main process did not load the plugin (Node 20 runs
  // --import modules in the test files' processes only), so each file's
  // process owns a run of its own.
  const handoff = readHandoff();
  const { owns, handed } = runOwnership(role !== 'child' || handoff === undefined);
  // mate-node-test, guard-run or node --test's main process resolved the settings.
  if (handed) return { role, settings: handed.settings, explicit: handed.explicit, owner: owns };
  // node itself takes no --guard-* flags: MATE_NODE_TEST_GUARD_* only.
  const { settings, explicit } = resolveNodeTestConfig([]);
  return { role, settings, explicit, owner: owns };
}

/** Damage no test owned (module code, hooks): fails the file's process once its tests are done. */
function failOutsideDamageAtExit(scope: string): void {
  process.on('exit', () => {
    const found = takeOutsideDamage({ all: true });
    if (!found.length) return;
    process.stderr.write(`${outsideTestsError(found, scope).message}\n`);
    if (!process.exitCode) process.exitCode = 1;
  });
}

export function start(): PluginState {
  const existing = getState();
  if (existing) return existing;
  const { role, settings, explicit, owner } = decide();
  const state: PluginState = { role, settings, guarding: false };
  setState(state);
  if (!settings.enabled) return state;
  // Once, where the run starts (a file's process runs the same node).
  if (owner) checkNodeVersion();
  // Before install and before any child starts: children inherit the handoff.
  const run = owner ? GuardedRun.start({ runner: 'node-test', settings, explicit }) : undefined;
  const reportDir = run?.dir ?? settings.reportDir;
  if (runsTests(role)) {
    installFromSettings(run?.settings ?? settings);
    state.guarding = true;
    aroundEveryTestFunction(aroundTest);
    failOutsideDamageAtExit(role === 'child' ? 'this file' : 'this run');
  } else if (reportDir) {
    const announced = new Set<string>();
    const onFile = crashedTestsOfFile(reportDir, announced, PROCESS_LABEL);
    let marked = false;
    aroundEveryTestFunction((test, call, args) => {
      if (kindOf(test) !== 'file') return call(args);
      // A run that starts no file (an empty folder) guarded nothing by no mistake: node's own result stands.
      if (!marked) markTestsStarted(reportDir);
      marked = true;
      return onFile(test, call, args);
    });
  }
  // Watch mode: a summary per round. Else at exit, after install, so core's exit check and counters come first.
  if (run && role === 'main' && watchRequested(NODE_ARGS, process.execArgv))
    onRootTest((root) => endEachWatchRound(root, run));
  else if (run) endRunAtExit(run, role === 'child' ? PER_FILE_NOTE : undefined);
  return state;
}
