#!/usr/bin/env bash
# What the newer-Node tier (test/node-lines.test.mjs) needs: the Node release
# lines after this one that are in use (each line's version pinned here, the
# one place to move them), from the npm registry (node-linux-<arch>),
# unpacked into .node-lines/<major>/bin/node. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSIONS="22.23.5 24.22.3 26.12.1"
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *)
    echo "install-node-lines: no Node builds on npm for $(uname -m)" >&2
    exit 1
    ;;
esac
for version in $VERSIONS; do
  dest=.node-lines/${version%%.*}
  bash scripts/unpack-node.sh "node-linux-$arch" "$dest" "$version"
  echo "install-node-lines: node $("$dest/bin/node" --version) in $dest"
done
