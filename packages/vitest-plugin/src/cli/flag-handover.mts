// Where the guard flags come from: `mate-vitest` hands over the ones it took
// out of the command line (vitest's own parser would reject them), and plain
// `vitest run -- --guard-alloc` leaves them after `--`, which vitest ignores.
const HANDOFF = Symbol.for('mate-guard.vitest.cli-flags');

interface Handoff {
  flags: readonly string[];
  /** Set when a guardAlloc() plugin read them: mate-vitest warns otherwise. */
  read: boolean;
}

type WithHandoff = { [HANDOFF]?: Handoff };

/** Called by mate-vitest, in the same process, before vitest loads the config. */
export function handOverCliFlags(flags: readonly string[]): void {
  (globalThis as WithHandoff)[HANDOFF] = { flags: [...flags], read: false };
}

/** Whether a plugin read the flags mate-vitest handed over. */
export function cliFlagsWereRead(): boolean {
  return (globalThis as WithHandoff)[HANDOFF]?.read ?? false;
}

/** Guard flags for the resolver, in command-line order (later ones win). */
export function guardFlagArgs(argv: readonly string[] = process.argv): string[] {
  const handoff = (globalThis as WithHandoff)[HANDOFF];
  if (handoff) handoff.read = true;
  const dashDash = argv.indexOf('--');
  const afterDashDash = dashDash < 0 ? [] : argv.slice(dashDash + 1);
  return [...(handoff?.flags ?? []), ...afterDashDash];
}
