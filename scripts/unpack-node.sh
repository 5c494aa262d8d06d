#!/usr/bin/env bash
# A Node binary from the npm registry's node-linux-<arch> packages, for the
# test tiers that run another Node (install-arm64-tools.sh,
# install-node-lines.sh):
#   unpack-node.sh <package> <dest> <version> [fallback spec...]
# unpacks <package>@<version> (else the first fallback spec npm can pack)
# into <dest>/bin/node and writes <version> to <dest>/VERSION; nothing to do
# when <dest>/VERSION already says <version>.
set -euo pipefail
package=$1 dest=$2 version=$3
shift 2
[ "$(cat "$dest/VERSION" 2>/dev/null)" = "$version" ] && exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
packed=
for spec in "$@"; do
  if (cd "$tmp" && npm pack --silent "$package@$spec" >/dev/null); then
    packed=1
    break
  fi
done
[ -n "$packed" ] || {
  echo "unpack-node: npm could not pack $package at any of: $*" >&2
  exit 1
}
rm -rf "$dest"
mkdir -p "$dest"
tar xzf "$tmp"/"$package"-*.tgz -C "$dest" --strip-components=1 package/bin/node
echo "$version" >"$dest/VERSION"
