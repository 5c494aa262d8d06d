// node:test offers no hook around each test, and its Test class is
// internal. Every test (node --test's per-file FileTest too) is an
// AsyncResource of type 'Test' that calls its function through
// runInAsyncScope: the first such resource (the root test, made before any
// test function runs) yields the class, whose runInAsyncScope is wrapped
// once. That catches every way of writing tests: `import test from
// 'node:test'`, named imports, require, describe/it, t.test subtests.
import { createHook } from 'node:async_hooks';

/** The parts of node:test's internal Test object the plugin reads. */
export interface NodeTest {
  name: string;
  parent: NodeTest | null;
  fn: unknown;
  loc?: { file?: string };
  skipped: boolean;
  message: string | null;
  hookType?: string;
  reportedType?: string;
  constructor: { name: string };
}

/** What a wrapped call is: a test's body, a suite's body (at load), a hook, a file of node --test's main process, the root. */
export type TestKind = 'test' | 'suite' | 'hook' | 'file' | 'root';

export function kindOf(test: NodeTest): TestKind {
  if (typeof test.hookType === 'string') return 'hook';
  if (test.reportedType === 'suite') return 'suite';
  if (test.constructor.name === 'FileTest') return 'file';
  return test.parent === null ? 'root' : 'test';
}

/** Calls `fn` (the test's own function) with `args`: the test's context, and node's done callback for callback-style tests. */
export type CallTest = (args: unknown[]) => unknown;
export type Around = (test: NodeTest, call: CallTest, args: unknown[]) => unknown;

type RunInScope = (this: NodeTest, fn: (...a: unknown[]) => unknown, thisArg: unknown, ...args: unknown[]) => unknown;
const PATCHED = Symbol.for('mate-guard.node-test.patched');

function testPrototype(resource: object): (object & { runInAsyncScope: RunInScope; [PATCHED]?: true }) | undefined {
  for (let p = Object.getPrototypeOf(resource) as object | null; p; p = Object.getPrototypeOf(p) as object | null) {
    if (p.constructor?.name === 'Test' && 'createSubtest' in p) return p as never;
  }
  return undefined;
}

/** What the first Test gives: the root test of this process, once it is constructed. */
const rootWaiters: Array<(root: NodeTest) => void> = [];

/** Calls `fn` with the root test (node --test's main process: the run's root, whose `reporter` streams every event). */
export function onRootTest(fn: (root: NodeTest) => void): void {
  rootWaiters.push(fn);
}

/** Routes every call of a node:test test's function (once per process) through `around`. */
export function aroundEveryTestFunction(around: Around): void {
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type !== 'Test') return;
      const proto = testPrototype(resource as object);
      if (!proto) return; // someone else's AsyncResource named 'Test'
      hook.disable();
      // init runs inside its constructor: the root is complete a tick later.
      if (rootWaiters.length) queueMicrotask(() => rootWaiters.forEach((w) => w(resource as NodeTest)));
      if (proto[PATCHED]) return;
      proto[PATCHED] = true;
      const original = proto.runInAsyncScope;
      proto.runInAsyncScope = function (this: NodeTest, fn, thisArg, ...args) {
        if (fn !== this.fn) return original.call(this, fn, thisArg, ...args);
        return around(this, (a) => original.call(this, fn, thisArg, ...a), args);
      };
    },
  });
  hook.enable();
}
