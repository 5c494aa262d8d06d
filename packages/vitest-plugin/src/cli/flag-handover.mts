// Where the guard flags come from: `mate-vitest` parses them out of the
// command line (vitest's own parser would reject them) and hands the parsed
// values to the plugin in the same process; plain `vitest run -- --guard-alloc`
// leaves them after `--`, which vitest ignores and the plugin parses.
import { parseFlags, processState, RUNNER_FLAGS, type Layer, type ParsedFlags } from '@mate-guard/core/internal';

interface Handover {
  flags: ParsedFlags;
  /** Set when a guardAlloc() plugin read them: mate-vitest warns otherwise. */
  read: boolean;
}

const handover = processState<Handover>('mate-guard.vitest.flags');

/** Called by mate-vitest, before vitest loads the config. */
export function handOverFlags(flags: ParsedFlags): void {
  handover.set({ flags, read: false });
}

/** Whether this vitest runs under mate-vitest. */
export function flagsWereHandedOver(): boolean {
  return handover.get() !== undefined;
}

/** The arguments mate-vitest gave Vitest (its own without the guard flags). */
export function handedOverArgs(): readonly string[] {
  return handover.get()?.flags.rest ?? [];
}

/** Whether a plugin read the flags mate-vitest handed over. */
export function flagsWereRead(): boolean {
  return handover.get()?.read ?? false;
}

/** The command line's guard settings: mate-vitest's, or those after `--`. */
export function commandLineFlags(argv: readonly string[] = process.argv): Layer {
  const given = handover.get();
  if (given) {
    given.read = true;
    return given.flags.values;
  }
  const dashDash = argv.indexOf('--');
  return dashDash < 0 ? {} : parseFlags(argv.slice(dashDash + 1), RUNNER_FLAGS).values;
}
