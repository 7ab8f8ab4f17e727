#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests and the bench: Debian's PostgreSQL 15 binaries, a
# data directory of its own, trust authentication on loopback only. .ci/run, the tests' helpers
# (test/pg/) and the queue bench all start theirs through this script, so they start the same way.
#
#   scripts/test-postgres.sh start DIR [PORT]   prints postgres://postgres@127.0.0.1:<port>/postgres
#   scripts/test-postgres.sh stop DIR           stops the server of DIR (if it runs); DIR stays
#
# DIR holds the data directory (DIR/data), the Unix socket and the server's log; it is created if
# missing and its server is created on the first start (a second start reuses its data). Without
# PORT a free one is picked (another try on a port taken meanwhile); with PORT the server comes
# back where it was. As root, initdb refuses to run: the server runs as the `postgres` user, which
# then owns DIR (keep DIR out of private directories such as a 0700 home: /tmp is right).
# AXE_PG_BINDIR names another directory of PostgreSQL binaries (initdb, pg_ctl, postgres).
# Failure: one line on stderr saying why, exit 1.
set -euo pipefail

fail() {
  echo "cannot start PostgreSQL: $*" >&2
  exit 1
}

find_bindir() {
  if [ -n "${AXE_PG_BINDIR:-}" ]; then
    [ -x "$AXE_PG_BINDIR/pg_ctl" ] && [ -x "$AXE_PG_BINDIR/initdb" ] || return 1
    echo "$AXE_PG_BINDIR"
    return
  fi
  local dir
  for dir in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/pg_ctl" ] && [ -x "$dir/initdb" ]; then
      echo "$dir"
      return
    fi
  done
  if command -v pg_config >/dev/null && [ -x "$(pg_config --bindir)/pg_ctl" ]; then
    pg_config --bindir
    return
  fi
  return 1
}

command=${1:-}
dir=${2:-}
[ -n "$command" ] && [ -n "$dir" ] || fail "usage: $0 start|stop DIR [PORT]"
dir=$(realpath -m -- "$dir")
bindir=$(find_bindir) || fail "no initdb/pg_ctl (install Debian's postgresql-15)"

# The server's user: as root, `postgres`; else whoever runs this.
as=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || fail "running as root and there is no postgres user to run the server"
  command -v runuser >/dev/null || fail "running as root and runuser is missing"
  as=(runuser -u postgres --)
fi

# The server's tools must not depend on the caller's working directory (a repository under a 0700
# directory is out of the postgres user's reach).
cd /

case "$command" in
stop)
  [ -f "$dir/data/postmaster.pid" ] || exit 0
  "${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
    "${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -t 60 stop >/dev/null 2>&1 ||
    { echo "cannot stop the PostgreSQL server of $dir" >&2; exit 1; }
  ;;
start)
  mkdir -p "$dir"
  chmod 700 "$dir"
  [ ${#as[@]} -eq 0 ] || chown postgres: "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    # Trust on loopback is enough: the server listens on 127.0.0.1 only and lives for one run.
    "${as[@]}" "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C \
      --no-sync --no-instructions >"$dir/initdb.log" 2>&1 ||
      fail "initdb failed: $(tail -n 1 "$dir/initdb.log")"
  fi
  port=${3:-}
  tries=1
  [ -n "$port" ] || tries=5
  for ((try = 1; try <= tries; try++)); do
    [ -n "${3:-}" ] || port=$((20000 + RANDOM % 40000))
    # A throwaway server: fsync off (a clean stop still writes everything), and room for the
    # connection pools of several workers and test files at once.
    options="-c listen_addresses=127.0.0.1 -c port=$port -c 'unix_socket_directories=$dir'"
    options+=" -c max_connections=400 -c fsync=off -c full_page_writes=off -c synchronous_commit=off"
    if "${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$options" start \
      >/dev/null 2>&1; then
      echo "$port" >"$dir/port"
      echo "postgres://postgres@127.0.0.1:$port/postgres"
      exit 0
    fi
  done
  fail "pg_ctl start failed: $(grep -E 'FATAL|ERROR|could not' "$dir/server.log" 2>/dev/null | tail -n 1)"
  ;;
*)
  fail "usage: $0 start|stop DIR [PORT]"
  ;;
esac
