// A real npm registry on the loopback for the install tests: Verdaccio
// (a devDependency), started in its own process with a fresh storage and
// no uplinks, so it serves only what a test publishes to it.
import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'registry-server.cjs');

/**
 * Starts Verdaccio with its storage under `dir`. Resolves to
 * { url, token, stop() } once it listens and a publishing user exists.
 */
export async function startRegistry(dir) {
  const child = spawn(process.execPath, [SERVER, dir], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`verdaccio did not start in 30 s:\n${output}`)), 30_000);
    child.stdout.on('data', (d) => {
      output += d;
      const m = /listening on (\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`verdaccio exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
  const url = `http://127.0.0.1:${port}/`;
  // Verdaccio's own sign-up (what `npm adduser` does): a token to publish with.
  const res = await fetch(`${url}-/user/org.couchdb.user:mate-ci`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'mate-ci', password: 'mate-ci-password' }),
  });
  if (res.status !== 201) throw new Error(`verdaccio refused the user: ${res.status} ${await res.text()}`);
  const { token } = await res.json();
  return {
    url,
    token,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

/**
 * The entries of the repository's lock (`rootLock`) that `names` need: the
 * versions this checkout installed, with everything they depend on, as
 * [{ key, entry }]. `from`: where each name is looked up ('' = the top;
 * a workspace folder for a workspace's own dependency).
 */
export function lockClosure(rootLock, names) {
  const all = rootLock.packages;
  const out = new Map();
  /** Where `name` resolves from the package at `from`, as Node and npm look it up. */
  function resolve(from, name) {
    let base = from;
    for (;;) {
      const key = `${base ? `${base}/` : ''}node_modules/${name}`;
      if (all[key]) return key;
      if (!base) return null;
      const i = base.lastIndexOf('/node_modules/');
      base = i < 0 ? '' : base.slice(0, i);
    }
  }
  function visit(from, name, optional) {
    const key = resolve(from, name);
    if (!key) {
      if (optional) return;
      throw new Error(`the repository's lock has no ${name} for ${from || 'the project'}`);
    }
    if (out.has(key)) return;
    const entry = all[key];
    out.set(key, entry);
    for (const dep of Object.keys(entry.dependencies ?? {})) visit(key, dep, false);
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) visit(key, dep, true);
    for (const dep of Object.keys(entry.peerDependencies ?? {})) visit(key, dep, true);
  }
  for (const { from, name } of names) visit(from, name, false);
  return [...out].map(([key, entry]) => ({
    key,
    entry,
    name: entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 13),
  }));
}

/** The npm cache's content store (cacache), where `npm install` left every tarball it fetched. */
export function npmCacheContent(cacheDir) {
  return path.join(cacheDir, '_cacache');
}

/** The file holding `integrity` (sha512-<base64>) in a cacache store, or null. */
function cachedFile(cacache, integrity) {
  const m = /^(sha\d+)-(\S+)$/.exec(integrity.split(' ')[0]);
  if (!m) return null;
  const hex = Buffer.from(m[2], 'base64').toString('hex');
  const file = path.join(cacache, 'content-v2', m[1], hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
  return fs.existsSync(file) ? file : null;
}

/** The fields of a lock entry that a registry's version document carries. */
const MANIFEST_FIELDS = [
  'dependencies',
  'optionalDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'bin',
  'engines',
  'os',
  'cpu',
  'libc',
  'license',
  'hasInstallScript',
  'deprecated',
];

/**
 * Fills a Verdaccio storage folder with `packages` (from lockClosure) as if
 * they had been published there: each name's document with the versions
 * given, and each version's tarball, taken from the npm cache by the
 * lock's integrity. A version whose tarball is not cached (an optional
 * package of another platform) is listed without a tarball. Returns the
 * names of non-optional packages whose tarball was missing.
 */
export function seedStorage(storage, packages, cacache) {
  const byName = new Map();
  for (const p of packages) {
    if (!byName.has(p.name)) byName.set(p.name, new Map());
    byName.get(p.name).set(p.entry.version, p.entry);
  }
  const missing = [];
  for (const [name, versions] of byName) {
    const dir = path.join(storage, name);
    fs.mkdirSync(dir, { recursive: true });
    const base = name.split('/').pop();
    const doc = {
      name,
      versions: {},
      'dist-tags': {},
      time: {},
      _uplinks: {},
      _distfiles: {},
      _attachments: {},
      _rev: '1-0',
      readme: '',
    };
    for (const [version, entry] of versions) {
      const tgz = `${base}-${version}.tgz`;
      const manifest = { name, version, _id: `${name}@${version}` };
      for (const f of MANIFEST_FIELDS) if (entry[f] !== undefined) manifest[f] = entry[f];
      const file = entry.integrity && cachedFile(cacache, entry.integrity);
      if (file) {
        const data = fs.readFileSync(file);
        fs.writeFileSync(path.join(dir, tgz), data);
        const shasum = crypto.createHash('sha1').update(data).digest('hex');
        manifest.dist = { tarball: `http://localhost/${name}/-/${tgz}`, integrity: entry.integrity, shasum };
        doc._attachments[tgz] = { shasum, version };
      } else {
        manifest.dist = { tarball: `http://localhost/${name}/-/${tgz}`, integrity: entry.integrity };
        if (!entry.optional && !entry.os && !entry.cpu) missing.push(`${name}@${version}`);
      }
      doc.versions[version] = manifest;
      doc.time[version] = '2026-01-01T00:00:00.000Z';
    }
    const newest = [...versions.keys()].sort(compareSemver).pop();
    doc['dist-tags'].latest = newest;
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(doc));
  }
  return missing;
}

/** Orders plain x.y.z[-pre] versions (enough for picking `latest`). */
function compareSemver(a, b) {
  const pa = a.split(/[.+-]/);
  const pb = b.split(/[.+-]/);
  for (let i = 0; i < 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d) return d;
  }
  return (a.includes('-') ? 0 : 1) - (b.includes('-') ? 0 : 1);
}

/** Writes `files` ({ relative path: text }) under `dir`. */
export function writeFiles(dir, files) {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
}
