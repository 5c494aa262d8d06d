// Re-reading Mocha's own options (command line + .mocharc.* + package.json
// "mocha"): root-hook plugins are not given them.
import * as path from 'node:path';

type LoadOptions = (argv: readonly string[]) => Record<string, unknown>;

// The running Mocha first (found from its executable), then the project's,
// then the one next to us. Mocha 10/11 ship options.js, Mocha 12 options.cjs.
function loadOptionsFn(): LoadOptions | undefined {
  const bases = [process.cwd(), path.join(__dirname, '..', '..')];
  if (process.argv[1]) bases.unshift(path.dirname(process.argv[1]));
  for (const base of bases) {
    for (const file of ['mocha/lib/cli/options.cjs', 'mocha/lib/cli/options.js']) {
      try {
        const mod = require(require.resolve(file, { paths: [base] })) as { loadOptions?: LoadOptions };
        if (typeof mod.loadOptions === 'function') return mod.loadOptions;
      } catch {
        // try the next candidate
      }
    }
  }
  return undefined;
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
