#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback, for the server's tests and benchmark.
#
#   tests/server/pg.sh start [DIR]   initdb + start; prints the SQLAlchemy URL (and DIR on stderr)
#   tests/server/pg.sh stop DIR      stops it (immediate) and removes DIR
#
# Needs Debian's `postgresql` package (initdb and pg_ctl, found on PATH or under
# /usr/lib/postgresql/*/bin). As root the server runs as the `postgres` user (initdb refuses
# root). It listens on 127.0.0.1 on a free port with trust authentication, user `vlneval`.
# PG_FAST=1 turns fsync off (tests); the benchmark leaves PostgreSQL's durable defaults.
# Exit code 3: PostgreSQL is not installed.
set -euo pipefail

cmd=${1:?usage: pg.sh start [DIR] | pg.sh stop DIR}
find_bin() {
  command -v "$1" 2>/dev/null && return 0
  ls -1d /usr/lib/postgresql/*/bin/"$1" 2>/dev/null | sort -V | tail -n 1
}
INITDB=$(find_bin initdb || true)
PG_CTL=$(find_bin pg_ctl || true)
if [ -z "$INITDB" ] || [ -z "$PG_CTL" ]; then
  echo "pg.sh: initdb/pg_ctl not found (apt-get install -y postgresql)" >&2
  exit 3
fi
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case "$cmd" in
start)
  dir=${2:-$(mktemp -d /tmp/vlneval-pg.XXXXXX)}
  mkdir -p "$dir"
  chmod 755 "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  as_pg "$INITDB" -D "$dir/data" -U vlneval --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1
  opts="-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300"
  if [ "${PG_FAST:-0}" = 1 ]; then
    opts="$opts -c fsync=off -c full_page_writes=off -c synchronous_commit=off"
  fi
  as_pg "$PG_CTL" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$opts" start >/dev/null
  echo "$dir" >&2
  echo "postgresql+psycopg://vlneval@127.0.0.1:$port/postgres"
  ;;
stop)
  dir=${2:?usage: pg.sh stop DIR}
  as_pg "$PG_CTL" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
*)
  echo "usage: pg.sh start [DIR] | pg.sh stop DIR" >&2
  exit 2
  ;;
esac
