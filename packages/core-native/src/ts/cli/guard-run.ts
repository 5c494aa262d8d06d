// `mate guard-run [options] -- <command...>`: runs any command with the
// allocator installed in every Node process it starts.
import * as path from 'node:path';

import { deviceChildEnv } from '../install/device';
import { GuardConfigError } from '../errors';
import { superviseRun } from '../run/supervise';
import { describeGuardRunFlags } from '../settings/docs';
import { refuseWithoutDevice } from '../settings/device-only';
import { GUARD_RUN_FLAGS, parseFlags } from '../settings/flags';
import { resolveLayers } from '../settings/resolve';
import { spell, type GuardSettings } from '../settings/table';
import { show } from '../settings/values';

export function guardRunUsage(): string {
  return `Usage: mate guard-run [options] -- <command> [args...]

Runs <command> with the mate-guard allocator installed in every Node process
it starts (through NODE_OPTIONS=--require), before user code; with --device
cuda, also in Python processes that import torch. Exits with the command's
status (1 when it passed but a violation was reported).

Options:
${describeGuardRunFlags().join('\n')}
  -h, --help               show this help
`;
}

interface GuardRunArgs {
  settings: GuardSettings;
  command: string[];
}

export function parseGuardRunArgs(argv: readonly string[]): GuardRunArgs | 'help' {
  const dashDash = argv.indexOf('--');
  const options = dashDash < 0 ? argv : argv.slice(0, dashDash);
  if (options.includes('-h') || options.includes('--help')) return 'help';
  const { values, rest } = parseFlags(options, GUARD_RUN_FLAGS);
  if (rest.length > 0) {
    const known = [...GUARD_RUN_FLAGS.rows.map((r) => GUARD_RUN_FLAGS.flagOf(r)), '--help'].join(', ');
    if (rest[0].startsWith('-')) throw new GuardConfigError(`unknown option ${show(rest[0])}; known: ${known}`);
    throw new GuardConfigError(
      `unexpected ${show(rest[0])}: put the command after --, e.g. mate guard-run -- node test.js`,
    );
  }
  const command = dashDash < 0 ? [] : argv.slice(dashDash + 1);
  if (command.length === 0) throw new GuardConfigError('no command given: mate guard-run [options] -- <command...>');
  const settings: GuardSettings = { ...resolveLayers([values]), enabled: true };
  refuseWithoutDevice(settings, [{ values, where: spell.guardRunFlag, device: '--device cuda' }]);
  return { settings, command };
}

/** NODE_OPTIONS that load the preload, which installs from the handoff in every Node process. */
function withPreload(nodeOptions: string | undefined): string {
  const preload = path.resolve(__dirname, '..', 'install', 'auto-install.js');
  return `${nodeOptions ? nodeOptions + ' ' : ''}--require ${JSON.stringify(preload)}`;
}

export async function guardRun(args: GuardRunArgs): Promise<number> {
  const env = { ...process.env, NODE_OPTIONS: withPreload(process.env.NODE_OPTIONS) };
  // Python processes (PyTorch) find the device guard through these paths.
  if (args.settings.device === 'cuda') deviceChildEnv(env);
  const [command, ...commandArgs] = args.command;
  return superviseRun({
    runner: 'run',
    program: 'mate guard-run',
    name: show(command),
    settings: args.settings,
    env,
    autoInstall: true,
    command,
    args: commandArgs,
    // Canary damage: the whole command once more, in the configuration that
    // faults, with the same environment (Python processes find the device
    // guard through it).
    rerun: () => ({ command, args: commandArgs, env, autoInstall: true }),
    rerunOffFlag: '--no-rerun',
    end: () => ({
      nothingGuardedFix:
        'the command started no Node process (NODE_OPTIONS reaches node only; a command that resets NODE_OPTIONS drops it)',
    }),
  });
}
