#!/usr/bin/env bash
# Prints the folder holding an official `node` binary of the given version (e.g. 24.22.3), fetched
# once from the npm registry's `node-linux-<arch>` package (the Node project's own build) and kept
# in `${XDG_CACHE_HOME:-~/.cache}/axe-ci/node-<version>/bin`; later calls reuse it without any
# network. npm checks the package's integrity against the registry's record as it fetches it.
#
#   PATH="$(scripts/ci-node.sh 24.22.3):$PATH" node_modules/.bin/vitest run test/http
set -euo pipefail
version=${1:?usage: scripts/ci-node.sh <node version, e.g. 24.22.3>}
case $HOSTTYPE in
x86_64) arch=x64 ;;
aarch64) arch=arm64 ;;
*)
  echo "scripts/ci-node.sh: no node-linux package for $HOSTTYPE" >&2
  exit 1
  ;;
esac
cache=${XDG_CACHE_HOME:-$HOME/.cache}/axe-ci
dir=$cache/node-$version
if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/.fetch-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  if ! (cd "$work" && npm pack --loglevel=error "node-linux-$arch@$version" >/dev/null); then
    echo "scripts/ci-node.sh: cannot fetch node-linux-$arch@$version from the npm registry" >&2
    exit 1
  fi
  tar -xzf "$work/node-linux-$arch-$version.tgz" -C "$work" package/bin/node
  mkdir -p "$work/node-$version/bin"
  mv "$work/package/bin/node" "$work/node-$version/bin/node"
  # Whole or not at all: a fetch cut short leaves no folder a later call would take as complete. A
  # concurrent fetch that finished first is kept (mv -T does not move into an existing folder).
  if [ ! -x "$dir/bin/node" ]; then
    rm -rf "$dir"
    mv -T "$work/node-$version" "$dir"
  fi
fi
actual=$("$dir/bin/node" --version)
if [ "$actual" != "v$version" ]; then
  echo "scripts/ci-node.sh: $dir/bin/node is $actual, not v$version" >&2
  exit 1
fi
echo "$dir/bin"
