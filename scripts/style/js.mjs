// TypeScript and JavaScript through Biome (@biomejs/biome, pinned in the
// lock): formatter and linter, with the repo's biome.json.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT } from './files.mjs';

const BIOME = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome');

/**
 * `biome <command> [args] <files>`: its findings as `file:line: rule message`
 * and the files they name. The files are listed by the caller (git's list,
 * or paths given, which may lie outside the repository: Biome's own git
 * lookup would refuse those, so it is off here).
 */
export function biome(command, args, files) {
  if (files.length === 0) return { findings: [], files: [] };
  const r = spawnSync(
    process.execPath,
    [BIOME, command, '--reporter=github', '--vcs-enabled=false', '--no-errors-on-unmatched', ...args, ...files],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  if (r.error) throw r.error;
  const output = `${r.stdout}${r.stderr}`;
  // ::error title=<rule>,file=<path>,line=<n>,...::<message>
  const findings = [
    ...output.matchAll(/^::(?:error|warning|notice) title=([^,]*),file=([^,\n]+),line=(\d+)[^\n]*?::(.*)$/gm),
  ].map((m) => `${path.relative(ROOT, path.resolve(ROOT, m[2]))}:${m[3]}: ${m[1]} ${m[4]}`);
  // Biome exits non-zero on a finding, also on a broken config: never read
  // a failure without a finding as "nothing to report".
  if (r.status !== 0 && findings.length === 0) throw new Error(`biome ${command} failed:\n${output.trim()}`);
  return { findings, files: [...new Set(findings.map((f) => f.slice(0, f.indexOf(':'))))] };
}
