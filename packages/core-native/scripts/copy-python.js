#!/usr/bin/env node
'use strict';
// build:native and prepack: copies the PyTorch hook that `mate guard-run
// --device cuda` puts on PYTHONPATH from its one source, the Python package
// (packages/python), into python/ (git-ignored, shipped in the npm tarball).
// Outside the repository (an installed tarball) there is no source: the
// shipped copy stays as it is.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const source = path.resolve(root, '..', 'python');
// copy's name -> its source in packages/python
const COPIES = {
  'mate_guard_cuda.py': path.join(source, 'mate_guard', '_torch_hook.py'),
  'sitecustomize.py': path.join(source, 'guard-run', 'sitecustomize.py'),
};

if (!fs.existsSync(path.join(source, 'pyproject.toml'))) process.exit(0);
const out = path.join(root, 'python');
fs.mkdirSync(out, { recursive: true });
for (const [name, from] of Object.entries(COPIES)) {
  const to = path.join(out, name);
  const text = fs.readFileSync(from);
  if (!fs.existsSync(to) || !fs.readFileSync(to).equals(text)) fs.writeFileSync(to, text);
}
