// Mocha gives a root-hook plugin nothing in the main process of a
// --parallel run (root hooks run in the workers) and no event at the end of
// each watch-mode rerun. Every run goes through Mocha#run, which returns
// the Runner before any test starts: wrapping it hands the plugin each
// runner, to listen to like a reporter does.
import { loadFromMocha } from '../hooks/running-mocha';

/** The parts of Mocha's classes used in the main process. */
export interface MochaRunner {
  suite: object;
  failures: number;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  once(event: string, listener: (...args: unknown[]) => void): unknown;
  prependListener(event: string, listener: (...args: unknown[]) => void): unknown;
  emit(event: string, ...args: unknown[]): boolean;
}

interface TestLike {
  parent?: object;
  file?: string;
  state?: string;
  duration?: number;
  fullTitle(): string;
}

export interface MochaModule {
  prototype: { run(this: unknown, fn?: (failures: number) => void): MochaRunner };
  Test: new (title: string, fn?: () => void) => TestLike;
  Suite: new (title: string) => TestLike & { parent?: object; file?: string; root?: boolean };
}

const WRAPPED = Symbol.for('mate-guard.mocha.run-wrapped');

const isMochaModule = (mod: unknown): mod is MochaModule =>
  typeof (mod as { prototype?: { run?: unknown } } | null)?.prototype?.run === 'function';

/** The running Mocha's module (the one its CLI loaded), or undefined. */
function runningMocha(): MochaModule | undefined {
  return loadFromMocha(['lib/mocha.cjs', 'lib/mocha.js'], isMochaModule);
}

/** Calls `hook` with every runner Mocha makes in this process (each rerun in watch mode); the Mocha module, or undefined. */
export function onEveryRun(hook: (runner: MochaRunner, mocha: MochaModule) => void): MochaModule | undefined {
  const Mocha = runningMocha();
  if (!Mocha) return undefined;
  const proto = Mocha.prototype as MochaModule['prototype'] & {
    [WRAPPED]?: Array<(r: MochaRunner, m: MochaModule) => void>;
  };
  if (!proto[WRAPPED]) {
    const hooks: Array<(r: MochaRunner, m: MochaModule) => void> = [];
    const run = proto.run;
    proto.run = function (this: unknown, fn?: (failures: number) => void) {
      const runner = run.call(this, fn);
      for (const h of hooks) h(runner, Mocha);
      return runner;
    };
    proto[WRAPPED] = hooks;
  }
  proto[WRAPPED]!.push(hook);
  return Mocha;
}
