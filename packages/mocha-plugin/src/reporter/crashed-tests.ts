// A --parallel worker that a guard fault killed takes its file's results
// with it: Mocha reports one "Uncaught error outside test suite" and no
// test, so reporters (spec, mocha-junit-reporter) never name the test that
// crashed. The dying process's event names it: before the run's end event
// reaches the reporters, each crashed test is reported failed, with the
// report as its error message.
import * as path from 'node:path';

import { crashFailure, readReportDir, workerCrash, type ViolationEvent } from '@mate-guard/core/internal';

import type { MochaModule, MochaRunner } from './runner-hook';

function emitCrash(runner: MochaRunner, Mocha: MochaModule, e: ViolationEvent, label: string): void {
  const failure = crashFailure(e, label);
  const { file = '(unknown file)', suites: titles, title } = failure;
  const suite = new Mocha.Suite(titles.join(' ')) as InstanceType<MochaModule['Suite']> & { addTest(t: unknown): void };
  suite.parent = runner.suite;
  suite.file = path.resolve(file);
  const test = new Mocha.Test(title, () => undefined);
  suite.addTest(test);
  Object.assign(test, { file: suite.file, state: 'failed', duration: 0 });
  const err = new Error(failure.message);
  err.name = failure.name;
  err.stack = ''; // the report is the message
  runner.emit('suite', suite);
  runner.emit('test', test);
  runner.emit('fail', test, err);
  runner.emit('test end', test);
  runner.emit('suite end', suite);
}

/**
 * Before the reporters hear that the run ended: the tests that crashed
 * workers since the last run, reported failed. Mocha 12 may never end a
 * run whose worker died (the pool leaves the queued files hanging and the
 * process runs out of work): then the run is ended here, once nothing else
 * is left to do, so that reporters still write their results.
 */
export function reportCrashedTests(
  runner: MochaRunner,
  Mocha: MochaModule,
  reportDir: string,
  announced: Set<string>,
): void {
  let ended = false;
  const announce = (): number => {
    let n = 0;
    for (const e of readReportDir(reportDir).violations) {
      if (!workerCrash(e) || !e.file || announced.has(e.file)) continue;
      announced.add(e.file);
      emitCrash(runner, Mocha, e, 'mocha worker');
      n++;
    }
    return n;
  };
  const stranded = () => {
    if (!ended && announce() > 0) {
      process.stderr.write(
        '[mate-guard] a guard fault killed a mocha worker and mocha stopped waiting for the rest: ending the run here (test files still queued did not run)\n',
      );
      runner.emit('end');
    }
  };
  process.once('beforeExit', stranded);
  runner.prependListener('end', () => {
    ended = true;
    process.off('beforeExit', stranded);
    announce();
  });
}
