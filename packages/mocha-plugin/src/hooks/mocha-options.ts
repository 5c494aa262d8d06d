// Re-reading Mocha's own options (command line + .mocharc.* + package.json
// "mocha"): root-hook plugins are not given them.
import { loadFromMocha } from './running-mocha';

type LoadOptions = (argv: readonly string[]) => Record<string, unknown>;

const hasLoadOptions = (mod: unknown): mod is { loadOptions: LoadOptions } =>
  typeof (mod as { loadOptions?: unknown } | null)?.loadOptions === 'function';

// Mocha 10/11 ship options.js, Mocha 12 options.cjs.
function loadOptionsFn(): LoadOptions | undefined {
  return loadFromMocha(['lib/cli/options.cjs', 'lib/cli/options.js'], hasLoadOptions)?.loadOptions;
}

/** Mocha's merged options for these arguments, or {} if Mocha can't be found. */
export function loadMochaOptions(argv: readonly string[]): Record<string, unknown> {
  const load = loadOptionsFn();
  return load ? load([...argv]) : {};
}

/** Whether these options make Mocha run the files in worker processes. */
export function runsInWorkers(opts: Record<string, unknown>): boolean {
  const jobs = opts.jobs;
  return opts.parallel === true && (jobs === undefined || (typeof jobs === 'number' && jobs > 1));
}
