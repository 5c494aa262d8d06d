// The Python package under test: its wheel built from the checkout
// (packages/python/backend/mate_guard_backend.py, the in-tree build backend: no Node involved) and installed into a
// fresh virtual environment, as a user would have it.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { ROOT } from './run.mjs';

export const PYTHON_PKG = path.join(ROOT, 'packages', 'python');
export const LIB = path.join(ROOT, 'packages', 'core-native', 'build', 'Release', 'libmate_guard_cuda.so');

/** Why the Python tests cannot run here, or false. */
export function noPython() {
  try {
    execFileSync('python3', ['-c', 'import sys, venv, pytest; assert sys.version_info >= (3, 11)'], {
      stdio: 'ignore',
    });
  } catch {
    return 'no python3 >= 3.11 with venv and pytest';
  }
  return noLibrary();
}

/** Why python3 with pytest and numpy >= 1.22 (NEP 49's handler API) cannot be used here, or false. */
export function noNumpy() {
  try {
    execFileSync(
      'python3',
      [
        '-c',
        'import sys, pytest, numpy; assert sys.version_info >= (3, 9) and tuple(map(int, numpy.__version__.split(".")[:2])) >= (1, 22)',
      ],
      { stdio: 'ignore' },
    );
  } catch {
    return 'no python3 with pytest and numpy >= 1.22';
  }
  return false;
}

/** Why buildExtension cannot build a test extension here (it needs cc and python3-config), or false. */
export function noExtensionBuild() {
  try {
    execFileSync('cc', ['--version'], { stdio: 'ignore' });
    execFileSync('python3-config', ['--includes'], { stdio: 'ignore' });
  } catch {
    return 'no cc or python3-config to build the test extension';
  }
  return false;
}

/** Why libmate_guard_cuda.so (the Python package's library) is missing, or false. */
export function noLibrary() {
  return fs.existsSync(LIB) ? false : 'libmate_guard_cuda.so is not built';
}

/**
 * A C extension module built from `source` into `dir` as `<name><extension suffix>` with the system compiler,
 * for python3 (or the Python whose python3-config is `config`).
 */
export function buildExtension(source, dir, name, config = 'python3-config') {
  const includes = execFileSync(config, ['--includes'], { encoding: 'utf8' }).trim().split(/\s+/);
  const suffix = execFileSync(config, ['--extension-suffix'], { encoding: 'utf8' }).trim();
  execFileSync('cc', ['-shared', '-fPIC', '-O0', '-g', ...includes, source, '-o', path.join(dir, `${name}${suffix}`)]);
}

/** The wheel, built into `dir`; its path. */
export function buildWheel(dir) {
  return execFileSync('python3', [path.join(PYTHON_PKG, 'backend', 'mate_guard_backend.py'), '--out', dir], {
    encoding: 'utf8',
  }).trim();
}

/**
 * A fresh virtual environment outside the checkout (pytest from the system
 * site packages): its python. `install` runs pip there, e.g. ['--no-index', wheel].
 */
export function freshVenv(prefix, install) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  execFileSync('python3', ['-m', 'venv', '--system-site-packages', path.join(dir, 'venv')]);
  const python = path.join(dir, 'venv', 'bin', 'python');
  // A python3 that is itself a virtual environment (the GPU machine's, with
  // torch) lends its packages too: --system-site-packages reaches only the
  // base interpreter's.
  const outer = execFileSync(
    'python3',
    ['-c', 'import site, sys; print("\\n".join(site.getsitepackages()) if sys.prefix != sys.base_prefix else "")'],
    { encoding: 'utf8' },
  ).trim();
  if (outer) {
    const inner = execFileSync(python, ['-c', 'import site; print(site.getsitepackages()[0])'], {
      encoding: 'utf8',
    }).trim();
    fs.writeFileSync(path.join(inner, 'outer-venv.pth'), outer + '\n');
  }
  execFileSync(python, ['-m', 'pip', 'install', '--quiet', '--no-deps', '--disable-pip-version-check', ...install], {
    stdio: 'pipe',
  });
  return python;
}

/** A fresh project folder holding `files` (name -> text, or a path to copy). */
export function project(prefix, files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  for (const [name, content] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, name), content.startsWith('/') ? fs.readFileSync(content) : content);
  }
  return dir;
}

// pytest-xdist for python3 (the Python with numpy): its own, else Debian's
// python3-pytest-xdist (scripts/install-python-xdist.sh, /usr/bin/python3's),
// whose pure-Python packages are lent through a folder of links on
// PYTHONPATH. { path } ('' when python3 has it), or { skip } saying why not.
export function findXdist() {
  const has = (extra) => {
    try {
      execFileSync('python3', ['-c', 'import xdist, pytest'], {
        stdio: 'ignore',
        env: { ...process.env, PYTHONPATH: extra },
      });
      return true;
    } catch {
      return false;
    }
  };
  if (has('')) return { path: '' };
  let where;
  try {
    where = execFileSync(
      '/usr/bin/python3',
      ['-c', 'import os, xdist, execnet; print(os.path.dirname(os.path.dirname(xdist.__file__)))'],
      { encoding: 'utf8' },
    ).trim();
  } catch {
    return { skip: 'pytest-xdist is not installed here (scripts/install-python-xdist.sh installs it)' };
  }
  const lent = fs.mkdtempSync(path.join(os.tmpdir(), 'mate-py-xdist-'));
  for (const name of fs
    .readdirSync(where)
    .filter((n) => /^(xdist|execnet|pytest_xdist-.+\.dist-info|execnet-.+\.(egg|dist)-info)$/.test(n))) {
    fs.symlinkSync(path.join(where, name), path.join(lent, name));
  }
  return has(lent)
    ? { path: lent }
    : { skip: `pytest-xdist of /usr/bin/python3 (${where}) does not import in python3` };
}

/**
 * A Python with pytest 7 (Debian's /usr/bin/python3 has 7.2), for what depends on pytest's version, and the
 * python3-config to build extensions for it: { python, config }, or { skip } saying why not.
 */
export function findPytest7() {
  const python = '/usr/bin/python3';
  try {
    const version = execFileSync(python, ['-c', 'import pytest; print(pytest.__version__)'], {
      encoding: 'utf8',
    }).trim();
    if (!version.startsWith('7.')) return { skip: `${python} has pytest ${version}, not 7` };
    execFileSync(`${python}-config`, ['--includes'], { stdio: 'ignore' });
  } catch {
    return { skip: `no ${python} with pytest and ${python}-config` };
  }
  return { python, config: `${python}-config` };
}
