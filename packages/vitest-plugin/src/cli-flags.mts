// Where the guard flags come from: `mate-vitest` hands over the ones it took
// out of the command line (vitest's own parser would reject them), and plain
// `vitest run -- --guard-alloc` leaves them after `--`, which vitest ignores.
const HANDOFF = Symbol.for('mate-guard.vitest.cli-flags');

type Handoff = { [HANDOFF]?: readonly string[] };

/** Called by mate-vitest, in the same process, before vitest loads the config. */
export function handOverCliFlags(flags: readonly string[]): void {
  (globalThis as Handoff)[HANDOFF] = [...flags];
}

/** Guard flags for the resolver, in command-line order (later ones win). */
export function guardFlagArgs(argv: readonly string[] = process.argv): string[] {
  const fromCli = (globalThis as Handoff)[HANDOFF] ?? [];
  const dashDash = argv.indexOf('--');
  const afterDashDash = dashDash < 0 ? [] : argv.slice(dashDash + 1);
  return [...fromCli, ...afterDashDash];
}
