// Finding and running external symbolization tools, synchronously or not,
// never past a deadline.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The executable `name` in a PATH-style list, or undefined. */
export function findOnPath(name: string, searchPath: string | undefined): string | undefined {
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface ToolRun {
  command: string;
  args: string[];
  input?: string;
  timeoutMs: number;
}

/** stdout of a run that exited normally in time, else undefined. */
export type ToolOutput = string | undefined;

const MAX_OUTPUT = 64 * 1024 * 1024;

export function runToolSync(run: ToolRun): ToolOutput {
  if (run.timeoutMs <= 0) return undefined;
  const r = spawnSync(run.command, run.args, {
    input: run.input ?? '',
    encoding: 'utf8',
    timeout: run.timeoutMs,
    killSignal: 'SIGKILL',
    maxBuffer: MAX_OUTPUT,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  if (r.error || r.signal || r.status !== 0) return undefined;
  return r.stdout;
}

export function runTool(run: ToolRun): Promise<ToolOutput> {
  if (run.timeoutMs <= 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let out = '';
    let done = false;
    const finish = (value: ToolOutput): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(value);
    };
    const child = spawn(run.command, run.args, { stdio: ['pipe', 'pipe', 'ignore'] });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(undefined);
    }, run.timeoutMs);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      out += d;
      if (out.length > MAX_OUTPUT) child.kill('SIGKILL');
    });
    child.on('error', () => finish(undefined));
    child.on('close', (code, signal) => finish(code === 0 && !signal ? out : undefined));
    child.stdin.on('error', () => {}); // a tool that exits early closes its stdin
    child.stdin.end(run.input ?? '');
  });
}
