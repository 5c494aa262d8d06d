// A launcher's run (guard-run, mate-jest, mate-mocha, mate-node-test): it
// owns the run, starts the runner as a child and watches it from outside,
// because a guard fault may kill the runner itself before it can say
// anything; when the child exits it reruns canary damage and ends the run.
// In watch mode every round ends inside the runner: the launcher hands the
// settings over and leaves the run to the runner's main process.
import { CONFIG_ERROR_EXIT } from '../errors';
import type { SettingKey, GuardSettings } from '../settings/table';
import { runChild, type ChildExit } from './child';
import { GuardedRun, type RunEnd } from './lifecycle';
import { rerunCanaryReports, type RerunLauncher } from './rerun';

export interface SupervisedRun {
  /** Names the report directory: `mate-guard-<runner>-XXXX`. */
  runner: string;
  /** For the line when the command cannot start: `<program>: could not start <name>: ...`. */
  program: string;
  settings: GuardSettings;
  explicit?: SettingKey[];
  /** The child's environment; the handoff is added to it. */
  env: NodeJS.ProcessEnv;
  /** guard-run: every Node process installs the allocator at start. */
  autoInstall?: boolean;
  command: string;
  args: readonly string[];
  /** Shown for the command in the line when it cannot start (default: the command). */
  name?: string;
  /** Watch mode: the runner ends each round itself and owns the run. */
  watch?: boolean;
  /** How the runner reruns canary damage (when the rerun setting is on). */
  rerun?: RerunLauncher;
  /** The flag that turns reruns off, named in the rerun's line (default --no-guard-rerun). */
  rerunOffFlag?: string;
  /** Said as soon as the child exits, before any rerun (mate-jest: Jest itself was killed). */
  exited?(run: GuardedRun, exit: ChildExit): void;
  /**
   * A run asked to guard that guarded nothing fails (exit 2, the status of a
   * configuration error) where the runner passed: a mate-* CLI was told to guard.
   */
  nothingGuardedFails?: boolean;
  /** The run's end, knowing how the child exited (the runner's adapter: labels, what to reprint). */
  end(run: GuardedRun, exit: ChildExit): Omit<RunEnd, 'status' | 'more'>;
}

/** Runs the supervised command; the launcher's exit code. */
export async function superviseRun(s: SupervisedRun): Promise<number> {
  const start = (): Promise<ChildExit | undefined> =>
    runChild(s.command, s.args, s.env).catch((err: Error) => {
      process.stderr.write(`${s.program}: could not start ${s.name ?? s.command}: ${err.message}\n`);
      return undefined;
    });
  if (s.watch) {
    GuardedRun.leaveTo(s.env, s.settings, s.explicit);
    return (await start())?.status ?? 127;
  }
  const run = GuardedRun.start({
    runner: s.runner,
    settings: s.settings,
    explicit: s.explicit,
    env: s.env,
    autoInstall: s.autoInstall,
  });
  const exit = await start();
  if (exit) s.exited?.(run, exit);
  const reruns =
    exit && s.rerun && run.settings.rerun
      ? await rerunCanaryReports(run.read().violations, run.settings, s.rerun, s.rerunOffFlag)
      : '';
  // A command that never started: nothing ran, nothing to say (the directory still goes).
  const verdict = run.finish({ ...(exit ? s.end(run, exit) : {}), status: exit?.status ?? 127 });
  if (!exit) return 127;
  if (!verdict.quiet) process.stderr.write(reruns + verdict.text);
  if (verdict.nothingGuarded && s.nothingGuardedFails && verdict.exitCode === 0) return CONFIG_ERROR_EXIT;
  return verdict.exitCode;
}
