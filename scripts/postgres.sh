#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback for the tests and benchmarks.
#   scripts/postgres.sh start DIR   installs PostgreSQL from the system packages when missing,
#                                   creates a cluster in DIR, starts it on a free loopback port and
#                                   prints `export GATEHOUSE_TEST_POSTGRES=postgres://...`; with
#                                   openssl, the cluster also offers TLS with a certificate for
#                                   `localhost` from a certificate authority made for it (keys only
#                                   in DIR), and it prints `export GATEHOUSE_TEST_POSTGRES_CA=DIR/tls/ca.crt`
#   scripts/postgres.sh restart DIR restarts it as an operator would (`pg_ctl restart -m fast`)
#   scripts/postgres.sh down DIR    stops the server (`pg_ctl stop -m fast`), keeping DIR
#   scripts/postgres.sh up DIR      starts it again as it was started (an outage's end)
#   scripts/postgres.sh stop DIR    stops it and removes DIR
# As root the server runs as the `postgres` user (PostgreSQL refuses to run as root).
# The Rust tests run this themselves when GATEHOUSE_TEST_POSTGRES is unset
# (tests/support/postgres.rs); without a terminal, sudo is never asked for a password.
set -euo pipefail
action=${1:?usage: scripts/postgres.sh start|restart|down|up|stop DIR}
dir=${2:?usage: scripts/postgres.sh start|restart|down|up|stop DIR}

# The directory holding initdb and pg_ctl: Debian's versioned one, else the PATH's.
bindir() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$found" ] && [ -x "$found/initdb" ]; then echo "$found"; return 0; fi
  found=$(command -v initdb 2>/dev/null) || return 1
  dirname "$found"
}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

cannot_install() {
  echo "error: PostgreSQL's server programs (initdb, pg_ctl) are not installed, and $1." >&2
  echo "  Install PostgreSQL (Debian and Ubuntu: sudo apt-get install postgresql), or set" >&2
  echo "  GATEHOUSE_TEST_POSTGRES to the URL of a cluster the tests may use." >&2
  exit 1
}

install_postgres() {
  command -v apt-get >/dev/null 2>&1 || cannot_install "this is not a system apt-get can install them on"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || cannot_install "installing them needs root (there is no sudo)"
    # Under `cargo test` there is no one to type a password.
    if [ -t 0 ]; then sudo="sudo"; else sudo="sudo -n"; fi
  fi
  echo "==> installing PostgreSQL (system packages)" >&2
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql; } >&2 \
    || cannot_install "installing them failed (apt-get install postgresql, as root)"
}

# A free loopback port: one nothing accepts connections on.
free_port() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
    return
  fi
  local port
  while :; do
    port=$((20000 + RANDOM % 30000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
}

# A certificate authority and a server certificate for `localhost` it
# signed, in $1 (ECDSA P-256, valid two days); prints the server's settings.
make_certificates() {
  local tls=$1
  mkdir -p "$tls"
  openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -days 2 \
    -subj "/CN=Gatehouse test CA" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" -keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null
  openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -subj "/CN=localhost" \
    -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
  printf '%s\n' "subjectAltName=DNS:localhost" "basicConstraints=CA:FALSE" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >"$tls/server.ext"
  openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 2 \
    -extfile "$tls/server.ext" -out "$tls/server.crt" 2>/dev/null
  rm -f "$tls/ca.key" "$tls/server.csr" "$tls/server.ext"
  chmod 600 "$tls/server.key"
  [ "$(id -u)" -eq 0 ] && chown -R postgres "$tls"
  echo "-c ssl=on -c ssl_cert_file=$tls/server.crt -c ssl_key_file=$tls/server.key"
}

case "$action" in
start)
  if ! bin=$(bindir); then
    install_postgres
    bin=$(bindir) || cannot_install "they were not found after installing the postgresql package"
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
  port=$(free_port)
  tls_settings=""
  if command -v openssl >/dev/null 2>&1; then
    tls_settings=$(make_certificates "$dir/tls") || { echo "error: openssl could not make the test certificates" >&2; exit 1; }
  fi
  as_owner "$bin/initdb" -D "$dir/data" -U gatehouse -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=400 $tls_settings" \
    start >&2 || { cat "$dir/server.log" >&2; exit 1; }
  as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U gatehouse gatehouse >&2
  echo "export GATEHOUSE_TEST_POSTGRES=postgres://gatehouse@127.0.0.1:$port/gatehouse"
  if [ -n "$tls_settings" ]; then echo "export GATEHOUSE_TEST_POSTGRES_CA=$dir/tls/ca.crt"; fi
  ;;
restart | up)
  # On a stopped server, `restart` starts it with the options it last had (postmaster.opts).
  bin=$(bindir) || cannot_install "pg_ctl was not found"
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -m fast restart >&2 2>/dev/null \
    || { cat "$dir/server.log" >&2; exit 1; }
  ;;
down)
  bin=$(bindir) || cannot_install "pg_ctl was not found"
  as_owner "$bin/pg_ctl" -D "$dir/data" -w -t 60 -m fast stop >&2 || { cat "$dir/server.log" >&2; exit 1; }
  ;;
stop)
  if bin=$(bindir) && [ -d "$dir/data" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: scripts/postgres.sh start|restart|down|up|stop DIR" >&2
  exit 2
  ;;
esac
