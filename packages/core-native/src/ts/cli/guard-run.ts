// `mate guard-run [options] -- <command...>`: runs any command with the
// allocator installed in every Node process it starts.
import * as path from 'node:path';

import { AUTO_INSTALL_ENV } from '../auto-install';
import { runChild } from '../child-process';
import { GuardConfigError } from '../errors';
import { formatUnmatchedGlobs, parseSampleRate, unmatchedNativeGlobs } from '../native-heap';
import { RunReportCollector } from '../runner-support';
import { GUARD_MODES } from '../settings';
import { parseChoice, show } from '../values';

export const GUARD_RUN_USAGE = `Usage: mate guard-run [options] -- <command> [args...]

Runs <command> with the mate-guard allocator installed in every Node process
it starts (through NODE_OPTIONS=--require), before user code. Exits with the
command's status.

Options:
  --mode <tail|head>     guard page after the end (tail, default) or before the start (head)
  --log-allocations      print one [mate-guard] line per allocation and free
  --alignment <n>        user pointer alignment, a power of two 1..4096 (default 16; 1 is byte-exact)
  --native <glob>        also guard the native heap (malloc/new) of modules matching <glob>
                         (absolute path or file name, e.g. '*my_addon.node'); repeatable
  --native-sample-rate <n>  guard one native allocation in n (default 1: every one)
  -h, --help             show this help
`;

export interface GuardRunArgs {
  mode: 'tail' | 'head';
  logAllocations: boolean;
  alignment?: number;
  native: string[];
  nativeSampleRate?: number;
  command: string[];
}

export function parseGuardRunArgs(argv: readonly string[]): GuardRunArgs | 'help' {
  const out: GuardRunArgs = { mode: 'tail', logAllocations: false, native: [], command: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      out.command = argv.slice(i + 1);
      break;
    }
    if (arg === '-h' || arg === '--help') return 'help';
    const [name, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => {
      if (inline !== undefined) return inline;
      const next = argv[++i];
      if (next === undefined || next === '--') throw new GuardConfigError(`${name} needs a value`);
      return next;
    };
    switch (name) {
      case '--mode':
        out.mode = parseChoice(value(), GUARD_MODES, '--mode', 'guard mode');
        break;
      case '--log-allocations':
        out.logAllocations = true;
        break;
      case '--alignment': {
        const v = value();
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1 || n > 4096 || (n & (n - 1)) !== 0) {
          throw new GuardConfigError(`--alignment: ${show(v)} is not allowed; use a power of two from 1 to 4096`);
        }
        out.alignment = n;
        break;
      }
      case '--native': {
        const glob = value();
        if (glob === '') throw new GuardConfigError('--native needs a glob, e.g. --native \'*my_addon.node\'');
        out.native.push(glob);
        break;
      }
      case '--native-sample-rate':
        out.nativeSampleRate = parseSampleRate(value(), '--native-sample-rate');
        break;
      case '--device':
        throw new GuardConfigError(`${name}: guarding CUDA memory is not available in this version of mate-guard`);
      default:
        if (!arg.startsWith('-')) {
          throw new GuardConfigError(`unexpected ${show(arg)}: put the command after --, e.g. mate guard-run -- node test.js`);
        }
        throw new GuardConfigError(`unknown option ${show(arg)}; known: --mode, --log-allocations, --alignment, --native, --native-sample-rate, --help`);
    }
  }
  if (out.command.length === 0) throw new GuardConfigError('no command given: mate guard-run [options] -- <command...>');
  return out;
}

export async function guardRun(args: GuardRunArgs): Promise<number> {
  const env = { ...process.env };
  const collector = new RunReportCollector('run', env);
  const preload = path.resolve(__dirname, '..', 'auto-install.js');
  env.NODE_OPTIONS = `${env.NODE_OPTIONS ? env.NODE_OPTIONS + ' ' : ''}--require ${JSON.stringify(preload)}`;
  env[AUTO_INSTALL_ENV.enable] = '1';
  env[AUTO_INSTALL_ENV.mode] = args.mode;
  env[AUTO_INSTALL_ENV.logAllocations] = args.logAllocations ? '1' : '0';
  if (args.alignment !== undefined) env[AUTO_INSTALL_ENV.alignment] = String(args.alignment);
  if (args.native.length) env[AUTO_INSTALL_ENV.modules] = JSON.stringify(args.native);
  if (args.nativeSampleRate !== undefined) env[AUTO_INSTALL_ENV.sampleRate] = String(args.nativeSampleRate);
  const exit = await runChild(args.command[0], args.command.slice(1), env).catch((err: Error) => {
    process.stderr.write(`mate guard-run: could not start ${show(args.command[0])}: ${err.message}\n`);
    return undefined;
  });
  const unmatched = args.native.length ? unmatchedNativeGlobs(collector.dir) : [];
  const { text } = collector.finish();
  if (!exit) return 127;
  process.stderr.write(text + formatUnmatchedGlobs(unmatched));
  return exit.status;
}
