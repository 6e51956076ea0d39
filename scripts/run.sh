#!/usr/bin/env bash
# Runs Gatehouse on its embedded default: SQLite in the user's data
# directory. Until the server and the desktop window land, this fills the
# database with the demo workload and prints what a reviewer would see.
# Pass arguments to run another command, e.g. `scripts/run.sh gates list`.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cc >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq build-essential
fi
if [ $# -eq 0 ]; then set -- demo; fi
exec cargo run --release --locked -q -p gatehouse-cli -- "$@"
