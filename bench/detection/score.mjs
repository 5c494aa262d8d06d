// The detection benchmark: real bug shapes (shapes.cc, written here after
// publicly fixed bugs), each run plainly (it must run silently: the bug
// is unseen) and under `mate guard-run` (JS buffers guarded, and the
// native heap of the shapes' addon with --native): caught or missed, the
// report's kind, and the source line it names. Damage found late (canary)
// is followed by one rerun with the setting the report's hint gives (what
// the mate-* CLIs do automatically), to name the line of the bad access.
//   node bench/detection/score.mjs [--only <shape,...>] [--json <file>]
// Prints a Markdown table (bench/README.md keeps the latest).
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(here, '..', '..');
const MATE = path.join(ROOT, 'packages', 'core-native', 'bin', 'mate.js');
const DRIVER = path.join(here, 'run-shape.js');

// shape -> [what it is, the public fix whose shape it reproduces, the kind a catch reports]
const SHAPES = {
  utf8TruncatedLead: [
    "UTF-8 decoder reads the continuation bytes of a truncated lead byte at a Buffer's end (1-3 bytes past)",
    'kgabis/parson#229, sheredom/utf8.h#136, HOST-Oman/libraqm#218',
    'heap-buffer-overflow',
  ],
  cborLengthOverread: [
    'CBOR string length prefix trusted: copy reads past a short Buffer',
    'bergzand/NanoCBOR#98, obgm/libcoap#1080',
    'heap-buffer-overflow',
  ],
  sealOutputTooSmall: [
    'box/seal binding writes the 16-byte MAC past an output Buffer sized for the message',
    'issue 55 (a libsodium binding, JS buffer overflow)',
    'heap-buffer-overflow',
  ],
  keptBufferPointer: [
    "binding keeps a Buffer's data pointer without a reference, writes after GC",
    'Node-API buffer lifetime (napi_get_buffer_info without napi_ref)',
    'heap-use-after-free',
  ],
  nulTerminatorOffByOne: [
    'strcpy into malloc(strlen(s)): the NUL one byte past',
    'Tencent/libpag#2232',
    'canary-corruption',
  ],
  mapEraseThenRead: [
    'std::unordered_map<size_t,size_t>: erase(it) then it->second (node exports operator[])',
    'LoneGazebo/Community-Patch-DLL#11784, morganstanley/hobbes#422',
    'heap-use-after-free',
  ],
  reentrantVectorGrowth: [
    'reference into a vector kept across a callback that grows it',
    'boostorg/unordered#245',
    'heap-use-after-free',
  ],
  doubleFreeErrorPath: [
    'error path frees, caller frees again (block already reused)',
    'Foundry376/Mailspring-Sync#23 (libetpan#436), IEEEICSG/IEEE_Taggant_System#8',
    'double-free',
  ],
  negativeIndexWrite: [
    'index pos - 3 with pos 0 writes before a heap table',
    'nodejs/node#7494 (negative index in string_search)',
    'canary-corruption',
  ],
  memcpyWrongLength: [
    'memcpy sized by the 104-byte source, not the 96-byte destination',
    'google/hiba#62, nanomq/hocon#8',
    'heap-buffer-overflow',
  ],
  fixedWidthOverread: ['checksum of a 96-byte field over a 40-byte record', 'ntop/nDPI#1576', 'heap-buffer-overflow'],
  sizeOverflowWrap: [
    '16-bit width * height wraps (852432 -> 464); the first row (472 bytes) runs past the block',
    'nodejs/node#7494 (overflows in src/)',
    'heap-buffer-overflow',
  ],
  reallocStalePointer: [
    'write through the pointer a moving realloc invalidated',
    'rnpgp/rnp#588, mrubyc/mrubyc#304',
    'heap-use-after-free',
  ],
  loopBoundOffByOne: [
    'loop bound i <= count reads one element past an array',
    'classic off-by-one (cf. sheredom/utf8.h#136)',
    'heap-buffer-overflow',
  ],
  foreignFreeThenWrite: [
    "getline's buffer (libc allocated it: never guarded) freed on a cleanup path, then its newline stripped through the stale pointer",
    'CWE-416 write after free of memory another library allocated (issue 55: the foreign quarantine)',
    'heap-use-after-free',
  ],
};

const argv = process.argv.slice(2);
const opt = (name) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : undefined);
const only = opt('only')?.split(',');

function findCxx() {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter))
    for (const n of ['c++', 'g++', 'clang++']) if (fs.existsSync(path.join(dir, n))) return path.join(dir, n);
  throw new Error('no C++ compiler on PATH');
}

// -O1: GCC 12 at -O2 inlines the map's operator[] (nothing left for node to serve) and
// drops some dead stores the shapes need; the bugs are the same at any level.
const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mate-detection-')), 'detection_shapes.node');
execFileSync(findCxx(), [
  '-shared',
  '-fPIC',
  '-O1',
  '-g',
  '-std=c++17',
  '-I',
  path.join(ROOT, 'node_modules', 'node-api-headers', 'include'),
  '-o',
  out,
  path.join(here, 'shapes.cc'),
]);

const env = { ...process.env, SHAPES_ADDON: out, CI: 'true', NO_COLOR: '1' };
for (const k of Object.keys(env)) if (k.startsWith('MATE_')) delete env[k];
delete env.NODE_OPTIONS;

function run(args) {
  const r = spawnSync(args[0], args.slice(1), { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status ?? (r.signal ? `signal ${r.signal}` : 'none'), output: `${r.stdout}${r.stderr}` };
}
const node = (shape) => [process.execPath, '--expose-gc', DRIVER, shape];
const guarded = (shape, extra = []) =>
  run([process.execPath, MATE, 'guard-run', '--native', '*detection_shapes.node', ...extra, '--', ...node(shape)]);

/** The first report's kind, and the line of shapes.cc it names (the access, else the bad free's call). */
function finding(output) {
  const lines = output.split('\n');
  const at = lines.findIndex((l) => l.startsWith('==mate-guard== ERROR: '));
  if (at < 0) return null;
  const kind = /^==mate-guard== ERROR: ([a-z-]+)/.exec(lines[at])[1];
  const report = lines.slice(at);
  const access = report.findIndex((l) => l === '==mate-guard== access:');
  const frame = (from) =>
    report
      .slice(from)
      .map((l) => /^==mate-guard== {3}#[\d.]+ (\S+) \S*shapes\.cc:(\d+)/.exec(l))
      .find(Boolean);
  const site = access >= 0 ? frame(access) : kind === 'canary-corruption' ? undefined : frame(0);
  return {
    kind,
    site: site ? `${site[1]} shapes.cc:${site[2]}` : null,
    hint: report.find((l) => l.startsWith('==mate-guard== hint: ')) ?? '',
  };
}

/** The flags a canary report's hint asks for. */
function rerunFlags(hint) {
  const exact = /--native-exact-size (\d+)/.exec(hint);
  if (exact) return ['--native-exact-size', exact[1]];
  if (/--guard-mode head/.test(hint)) return ['--mode', 'head'];
  if (/--guard-mode tail/.test(hint)) return ['--mode', 'tail'];
  return null;
}

const rows = [];
for (const [shape, [what, fix, expected]] of Object.entries(SHAPES)) {
  if (only && !only.includes(shape)) continue;
  const plain = run(node(shape));
  const silent = plain.code === 0 && plain.output.includes(`done ${shape}`) && !plain.output.includes('==mate-guard==');
  const g = guarded(shape);
  const f = finding(g.output);
  let followUp = null;
  if (f?.kind === 'canary-corruption') {
    const flags = rerunFlags(f.hint);
    if (flags) {
      const again = finding(guarded(shape, flags).output);
      followUp = { flags: flags.join(' '), kind: again?.kind ?? 'none', site: again?.site ?? null };
    }
  }
  const caught = f !== null && f.kind === expected && (f.site !== null || followUp?.site);
  rows.push({
    shape,
    what,
    fix,
    plain: silent ? 'silent' : `NOT silent (exit ${plain.code})`,
    guardedExit: g.code,
    kind: f?.kind ?? 'none',
    site: f?.site ?? null,
    followUp,
    caught: Boolean(caught),
  });
  process.stderr.write(`${shape}: ${caught ? 'caught' : 'missed'}\n`);
}

const cell = (s) => String(s).replace(/\|/g, '\\|');
let md =
  "| # | shape | shape of (public fix) | plain | guarded | report | site named | follow-up (hint's setting) |\n|---|---|---|---|---|---|---|---|\n";
rows.forEach((r, i) => {
  const follow = r.followUp
    ? `\`${r.followUp.flags}\`: ${r.followUp.kind}${r.followUp.site ? ` at ${r.followUp.site}` : ''}`
    : '';
  md += `| ${i + 1} | \`${r.shape}\`: ${cell(r.what)} | ${cell(r.fix)} | ${r.plain} | ${r.caught ? '**caught**' : '**missed**'} (exit ${r.guardedExit}) | ${r.kind} | ${r.site ?? (r.kind === 'canary-corruption' ? 'found at free' : '-')} | ${follow} |\n`;
});
const caught = rows.filter((r) => r.caught).length;
md += `\n${caught} of ${rows.length} caught; ${rows.filter((r) => r.plain === 'silent').length} of ${rows.length} silent in the plain run.\n`;
process.stdout.write(md);
if (opt('json')) fs.writeFileSync(opt('json'), JSON.stringify(rows, null, 2));
fs.rmSync(path.dirname(out), { recursive: true, force: true });
