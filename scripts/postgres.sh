#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback for the tests and benchmarks.
#   scripts/postgres.sh start DIR   installs PostgreSQL from the system packages when missing,
#                                   creates a cluster in DIR, starts it on a free loopback port and
#                                   prints `export GATEHOUSE_TEST_POSTGRES=postgres://...`
#   scripts/postgres.sh stop DIR    stops it and removes DIR
# As root the server runs as the `postgres` user (PostgreSQL refuses to run as root).
set -euo pipefail
action=${1:?usage: scripts/postgres.sh start|stop DIR}
dir=${2:?usage: scripts/postgres.sh start|stop DIR}

bindir() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$found" ] && [ -x "$found/initdb" ] && echo "$found"
}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$action" in
start)
  if ! bin=$(bindir); then
    echo "==> installing PostgreSQL (system packages)" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >&2
    bin=$(bindir)
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  as_owner "$bin/initdb" -D "$dir/data" -U gatehouse -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=400" \
    start >&2 || { cat "$dir/server.log" >&2; exit 1; }
  as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U gatehouse gatehouse >&2
  echo "export GATEHOUSE_TEST_POSTGRES=postgres://gatehouse@127.0.0.1:$port/gatehouse"
  ;;
stop)
  if bin=$(bindir) && [ -d "$dir/data" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: scripts/postgres.sh start|stop DIR" >&2
  exit 2
  ;;
esac
