// Runs a command with its output going to a file, not a pipe (a process
// the suite leaves behind must not hold the run open), timing it.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';

/** `cmd` in `cwd` with `env`, its stdout and stderr written to `outFile`: exit status, wall ms and the output. */
export function runToFile(cmd, { cwd, env, outFile }) {
  const fd = fs.openSync(outFile, 'w');
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd[0], cmd.slice(1), { cwd, env, stdio: ['ignore', fd, fd] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  fs.closeSync(fd);
  return { status: r.status, ms, out: fs.readFileSync(outFile, 'utf8') };
}
