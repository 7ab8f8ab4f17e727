#!/usr/bin/env bash
# Runs every test file, or the vitest arguments given, on the official Node <version> (fetched once
# by scripts/ci-node.sh), then prints `Node v<version>: Tests: N passed, N failed`. The tests spawn
# `process.execPath` and `node` from PATH: both are that Node. Needs node_modules and a built dist/
# (`npm test` on this machine's Node builds it: esbuild's output is the same for every version).
# Exits with vitest's status.
#
#   scripts/test-on-node.sh 24.22.3 test/http test/run/run.e2e.test.ts
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/test-on-node.sh <node version> [vitest arguments]}
shift
if ! cached=$(scripts/ci-node.sh "$version"); then
  echo "Node v$version: not run: no such Node binary"
  exit 1
fi
# Run as root, some tests spawn process.execPath as another user, who cannot reach the cache in
# root's private home: the tests run a copy in a temp dir anyone can read, removed at the end.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
chmod 755 "$bin"
cp "$cached/node" "$bin/node"
echo "== Node v$version: ${*:-every test file}"
rm -f test-results.json
status=0
CI=true PATH="$bin:$PATH" node_modules/.bin/vitest run "$@" || status=$?
if [ -f test-results.json ]; then
  printf 'Node v%s: ' "$version"
  "$bin/node" scripts/test-summary.mjs test-results.json
else
  echo "Node v$version: no test results (vitest exited with $status)"
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
