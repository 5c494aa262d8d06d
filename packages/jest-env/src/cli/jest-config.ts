// Reading the user's Jest config the way Jest does (its own reader), for
// what mate-jest adds to the command line: the reporter, the environment.
import * as path from 'node:path';

/** The value of `-c x`, `--config x`, `--config=x`, and where it sits. */
export function configArg(args: readonly string[]): { value: string; at: number; width: number } | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if ((a === '-c' || a === '--config') && i + 1 < args.length) return { value: args[i + 1], at: i, width: 2 };
    const m = /^(?:-c|--config)=(.*)$/s.exec(a);
    if (m) return { value: m[1], at: i, width: 1 };
  }
  return undefined;
}

type ReadInitialOptions = (config?: string, options?: { skipMultipleConfigError?: boolean }) => Promise<JestConfigFile>;

function jestConfigReader(jestBin: string): ReadInitialOptions | undefined {
  try {
    const mod = require(require.resolve('jest-config', { paths: [path.dirname(jestBin)] })) as {
      readInitialOptions?: ReadInitialOptions;
    };
    return mod.readInitialOptions;
  } catch {
    return undefined;
  }
}

export interface JestConfigFile {
  config: Record<string, unknown>;
  /** The config file, when there is one. */
  configPath: string | null;
}

/** The config Jest will use for these arguments, or undefined when it can't be read (Jest itself will say why). */
export async function readJestConfig(args: readonly string[], jestBin: string): Promise<JestConfigFile | undefined> {
  try {
    return await jestConfigReader(jestBin)?.(configArg(args)?.value, { skipMultipleConfigError: true });
  } catch {
    return undefined;
  }
}
