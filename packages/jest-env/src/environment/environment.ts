// The Jest test environment: Node's (or another one, wrapped), plus guarded
// buffers for the file's realm, per-test canary checks, and tag skips.
import type { EnvironmentContext, JestEnvironment, JestEnvironmentConfig } from '@jest/environment';
import type { Circus } from '@jest/types';
import {
  beginGuardedTest,
  endGuardedTest,
  flushGuardStats,
  formatTestPath,
  guardAllocatorConfig,
  GuardConfigError,
  guardRealm,
  guardSkipReason,
  isGuardAllocatorActive,
  isGuardTag,
  markReportsShown,
  noteTagSkip,
  outsideTestsError,
  takeOutsideDamage,
  violationError,
  type GuardSettings,
  type GuardViolation,
} from '@mate-guard/core/internal';
import NodeEnvironment from 'jest-environment-node';

import { announceOwnerless } from './ownerless';
import { installForFile } from './install';
import { projectName } from './project';
import { resolveJestSettings } from './settings';
import { stackFormatCache } from './stack-format-cache';
import { activeTags } from './tags';

/** Tags a file's docblock applies to all of its tests (`@guard_incompatible`). */
function docblockTags(pragmas: EnvironmentContext['docblockPragmas']): string[] {
  return Object.keys(pragmas ?? {}).filter(isGuardTag);
}

function titles(test: Circus.TestEntry): string[] {
  const out = [test.name];
  for (let block = test.parent; block?.parent; block = block.parent) out.unshift(block.name);
  return out;
}

function skippedAlready(test: Circus.TestEntry): boolean {
  if (test.mode === 'skip' || test.mode === 'todo') return true;
  for (let block: Circus.DescribeBlock | undefined = test.parent; block; block = block.parent) {
    if (block.mode === 'skip') return true;
  }
  return false;
}

// A bad value is the user's to fix: the message says which and how; a
// stack into mate-guard's internals would only bury it.
function quietConfigErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof GuardConfigError) err.stack = `${err.name}: ${err.message}`;
    throw err;
  }
}

/** A Jest test environment class: node's, jsdom's, or a project's own. */
export type EnvironmentClass = new (config: JestEnvironmentConfig, context: EnvironmentContext) => JestEnvironment;

/** An environment with mate-guard in it. */
export interface GuardedEnvironment extends JestEnvironment {
  readonly guardSettings: GuardSettings;
}

/**
 * `Base` with guarding: the class for `testEnvironment: '@mate-guard/jest-env'`
 * (over node's) and the one mate-jest supplies over a config's own
 * environment (jsdom keeps its DOM).
 */
export function guardEnvironmentOf(
  Base: EnvironmentClass,
): new (
  config: JestEnvironmentConfig,
  context: EnvironmentContext,
) => GuardedEnvironment {
  // The base's own handler (a project's environment may have one): called first.
  const baseHandler = Base.prototype.handleTestEvent as
    | ((event: Circus.Event, state: Circus.State) => void | Promise<void>)
    | undefined;
  return class GuardEnvironment extends Base implements GuardedEnvironment {
    /** What this file resolved to (flags > env > testEnvironmentOptions > off). */
    readonly guardSettings: GuardSettings;
    private readonly testPath: string;
    /** The Jest project's displayName: test paths start with it (one file can run in two projects). */
    private readonly project: string | undefined;
    private readonly fileTags: string[];
    private restoreRealm: (() => void) | undefined;
    private readonly stacks: ReturnType<typeof stackFormatCache>;
    /** Reports this file's tests (or the file) failed with: Jest shows them with the file's results. */
    private readonly delivered: GuardViolation[] = [];

    constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
      super(config, context);
      this.testPath = context.testPath;
      this.project = projectName(config.projectConfig.displayName);
      const { watch, watchAll } = config.globalConfig;
      this.stacks = stackFormatCache(!watch && !watchAll);
      this.fileTags = docblockTags(context.docblockPragmas);
      this.guardSettings = quietConfigErrors(() => resolveJestSettings(config.projectConfig.testEnvironmentOptions));
      if (this.guardSettings.enabled) {
        // Here, not in setup(): setupFiles run between the two and their
        // buffers should be guarded too.
        installForFile(this.guardSettings, this.testPath);
        this.restoreRealm = guardRealm(this.global as unknown as typeof globalThis);
        this.stacks.ensure();
        announceOwnerless();
      }
      this.handleTestEvent = (event, state) => {
        const before = baseHandler?.call(this, event, state);
        this.guardTestEvent(event, state);
        return before;
      };
    }

    override async setup(): Promise<void> {
      await super.setup();
      // Jest has installed this file's source-map formatter by now.
      if (this.guardSettings.enabled) this.stacks.ensure();
    }

    // Synchronous on purpose: Jest dispatches add_test without awaiting.
    private guardTestEvent(event: Circus.Event | Circus.SyncEvent | Circus.AsyncEvent, state: Circus.State): void {
      switch (event.name) {
        case 'add_test':
          this.tagSkip(state);
          break;
        case 'test_start':
          this.outsideTests(state);
          if (this.guardSettings.enabled) this.stacks.ensure();
          beginGuardedTest(formatTestPath(this.testPath, titles(event.test), this.project));
          break;
        case 'test_done': {
          const found = endGuardedTest();
          if (found.length) event.test.errors.push(violationError(found));
          this.delivered.push(...found);
          break;
        }
        case 'run_finish':
          this.outsideTests(state, true);
          break;
        default:
          break;
      }
    }

    override async teardown(): Promise<void> {
      if (isGuardAllocatorActive()) flushGuardStats(); // workers may be killed without 'exit'
      // The file ended: Jest shows its results, these reports with them. A
      // guard fault in a later file of this process takes them no more.
      const dir = guardAllocatorConfig()?.reportDir;
      if (dir)
        markReportsShown(
          dir,
          this.delivered.map((v) => v.event),
        );
      this.restoreRealm?.();
      this.restoreRealm = undefined;
      this.stacks.release();
      await super.teardown();
    }

    private tagSkip(state: Circus.State): void {
      if (!this.guardSettings.enabled) return;
      const test = state.currentDescribeBlock.tests.at(-1);
      if (!test || skippedAlready(test)) return;
      const reason = guardSkipReason([...this.fileTags, ...activeTags(this.global)], true);
      if (!reason) return;
      test.mode = 'skip';
      test.name = `${test.name} [skipped: ${reason}]`; // Jest has no skip-reason field
      noteTagSkip();
    }

    /**
     * Damage found between tests (module scope, beforeAll/afterAll, a buffer
     * the garbage collector freed after its test) fails the file, so that it
     * is never dropped; at the file's end (`all`) every live allocation is
     * checked.
     */
    private outsideTests(state: Circus.State, all = false): void {
      const found = takeOutsideDamage({ all });
      if (found.length) state.unhandledErrors.push(outsideTestsError(found, 'this file'));
      this.delivered.push(...found);
    }
  };
}

/** `testEnvironment: '@mate-guard/jest-env'`: Node's environment, guarded. */
export const GuardEnvironment = guardEnvironmentOf(NodeEnvironment as unknown as EnvironmentClass);
export default GuardEnvironment;
