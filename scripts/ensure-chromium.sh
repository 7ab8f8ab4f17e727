#!/usr/bin/env bash
# Prints the path of a headless Chromium, installing Debian's `chromium` package when there is
# none (as root, or through sudo when it needs no password). Exits non-zero with a one-line reason
# on stderr when it cannot. Only the path goes to stdout; apt's output goes to stderr.
#
#   CHROMIUM=/path/to/chrome scripts/ensure-chromium.sh   # use that binary instead
set -uo pipefail

fail() {
  echo "ensure-chromium: $*" >&2
  exit 1
}

found() {
  if [ -n "${CHROMIUM:-}" ]; then
    [ -x "$CHROMIUM" ] && { echo "$CHROMIUM"; return 0; }
    fail "CHROMIUM=$CHROMIUM is not an executable file"
  fi
  for candidate in /usr/bin/chromium "$(command -v chromium 2>/dev/null)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

found && exit 0

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  fail "chromium is not installed, and installing it needs root (no passwordless sudo)"
fi
command -v apt-get >/dev/null 2>&1 || fail "chromium is not installed, and there is no apt-get to install it"

apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300)
# Install from the package lists as they are; refresh them only when that fails.
if ! "${apt[@]}" install -y --no-install-recommends chromium >&2; then
  "${apt[@]}" update >&2 || fail "apt-get update failed"
  "${apt[@]}" install -y --no-install-recommends chromium >&2 || fail "apt-get install chromium failed"
fi

found || fail "chromium was installed but no chromium binary is on the PATH"
