// Spawns a real process (runner, CLI, node) and returns what a user sees.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MATE = path.join(ROOT, 'packages', 'core-native', 'bin', 'mate.js');
export const BIN = path.join(ROOT, 'node_modules', '.bin');

/**
 * run(cmd, args, { cwd, env, timeout }) -> { code, signal, stdout, stderr, output }
 * `env` is merged over a copy of process.env with the MATE_* variables removed,
 * so a developer's shell settings can't leak into a test.
 */
export function run(cmd, args = [], opts = {}) {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('MATE_')) delete env[k];
  delete env.NODE_OPTIONS;
  delete env.NODE_TEST_CONTEXT; // set by the node --test running this file: a spawned node --test would think it is a test file's process
  Object.assign(env, { CI: 'true', FORCE_COLOR: '0', NO_COLOR: '1' }, opts.env ?? {});
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let output = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      output += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
      output += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeout ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, output });
    });
  });
}

/** Runs `mate guard-run [flags] -- node [nodeArgs] script`. */
export function guardRun(flags, nodeArgs, opts) {
  return run(process.execPath, [MATE, 'guard-run', ...flags, '--', process.execPath, ...nodeArgs], opts);
}

/** The ==mate-guard== report lines of an output. */
export function reportLines(output) {
  return output.split('\n').filter((l) => l.startsWith('==mate-guard=='));
}

/** The report block that starts with `first` (its ERROR line) and the lines after it up to the next ERROR. */
export function reportOf(output, first) {
  const lines = reportLines(output);
  const start = lines.findIndex((l) => l.includes(first));
  assert.ok(start >= 0, `no report line containing ${JSON.stringify(first)} in:\n${output}`);
  const end = lines.findIndex((l, i) => i > start && l.includes(' ERROR: '));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** The report lines printed right after a `[mate-guard] rerun in <label>: ...` line (the rerun's fault). */
export function rerunReportOf(output, label) {
  const lines = output.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`[mate-guard] rerun in ${label}: `));
  if (at < 0) throw new Error(`no rerun in ${label} in:\n${output}`);
  const end = lines.findIndex((l, i) => i > at && !l.startsWith('==mate-guard=='));
  return lines.slice(at + 1, end < 0 ? undefined : end).join('\n');
}

/** The first line of a report's `allocated at:` stack. */
export function firstAllocationFrame(report) {
  const lines = report.split('\n');
  return lines[lines.indexOf('==mate-guard== allocated at:') + 1] ?? '';
}

/**
 * Starts a long-running command (a runner in watch mode) in its own process
 * group, without a TTY. `waitFor(re, n)` resolves once the output holds `n`
 * matches of `re` (rejects after `timeout` ms with the output so far);
 * `stop()` kills the whole group (workers included).
 */
export function startWatch(cmd, args = [], opts = {}) {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('MATE_')) delete env[k];
  delete env.NODE_OPTIONS;
  delete env.NODE_TEST_CONTEXT; // set by the node --test running this file: a spawned node --test would think it is a test file's process
  Object.assign(env, { CI: 'true', FORCE_COLOR: '0', NO_COLOR: '1' }, opts.env ?? {});
  const child = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let output = '';
  const waiters = new Set();
  const check = () => {
    for (const w of waiters) if ((output.match(w.re) ?? []).length >= w.n) w.done();
  };
  child.stdout.on('data', (d) => {
    output += d;
    check();
  });
  child.stderr.on('data', (d) => {
    output += d;
    check();
  });
  let exited = false;
  child.on('exit', () => {
    exited = true;
    for (const w of waiters) w.fail('the command exited');
  });
  return {
    get output() {
      return output;
    },
    waitFor(re, n = 1, timeout = 60_000) {
      const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g');
      return new Promise((resolve, reject) => {
        const w = {
          re: g,
          n,
          done: () => {
            clearTimeout(w.timer);
            waiters.delete(w);
            resolve(output);
          },
          fail: (why) => {
            clearTimeout(w.timer);
            waiters.delete(w);
            reject(new Error(`${why} before ${n} × ${re} in:\n${output}`));
          },
        };
        w.timer = setTimeout(() => w.fail(`${timeout} ms passed`), timeout);
        waiters.add(w);
        if (exited) w.fail('the command exited');
        else check();
      });
    },
    stop() {
      if (exited) return Promise.resolve();
      return new Promise((resolve) => {
        child.once('exit', resolve);
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          resolve();
        }
      });
    },
  };
}
