// Where the guard flags come from: `mate-vitest` parses them out of the
// command line (vitest's own parser would reject them) and hands the parsed
// values to the plugin in the same process; plain `vitest run -- --guard-alloc`
// leaves them after `--`, which vitest ignores and the plugin parses.
import { parseFlags, RUNNER_FLAGS, type Layer, type ParsedFlags } from '@mate-guard/core/internal';

const HANDOVER = Symbol.for('mate-guard.vitest.flags');

interface Handover {
  flags: ParsedFlags;
  /** Set when a guardAlloc() plugin read them: mate-vitest warns otherwise. */
  read: boolean;
}

type WithHandover = { [HANDOVER]?: Handover };

/** Called by mate-vitest, before vitest loads the config. */
export function handOverFlags(flags: ParsedFlags): void {
  (globalThis as WithHandover)[HANDOVER] = { flags, read: false };
}

/** Whether this vitest runs under mate-vitest. */
export function flagsWereHandedOver(): boolean {
  return (globalThis as WithHandover)[HANDOVER] !== undefined;
}

/** Whether a plugin read the flags mate-vitest handed over. */
export function flagsWereRead(): boolean {
  return (globalThis as WithHandover)[HANDOVER]?.read ?? false;
}

/** The command line's guard settings: mate-vitest's, or those after `--`. */
export function commandLineFlags(argv: readonly string[] = process.argv): Layer {
  const handover = (globalThis as WithHandover)[HANDOVER];
  if (handover) {
    handover.read = true;
    return handover.flags.values;
  }
  const dashDash = argv.indexOf('--');
  return dashDash < 0 ? {} : parseFlags(argv.slice(dashDash + 1), RUNNER_FLAGS).values;
}
