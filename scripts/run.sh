#!/usr/bin/env bash
# Runs Gatehouse on its embedded default: SQLite in the user's data
# directory. With a display, this opens the desktop app (the engine and
# server in-process, the reviewer UI in a native window, a tray with the
# pending count). Without one, it says so and serves the API and the UI to
# a browser instead. The demo workload runs only when asked.
#   scripts/run.sh                 desktop app, or `gatehouse serve` without a display
#   scripts/run.sh demo            serve with a simulated fleet of agents at work (the demo workload)
#   scripts/run.sh desktop [ARGS]  the desktop app, e.g. `desktop --db /tmp/g.db`
#   scripts/run.sh COMMAND [ARGS]  any `gatehouse` command, e.g. `serve` or `gates list`
set -euo pipefail
cd "$(dirname "$0")/.."

install_missing() {
  if [ $# -gt 0 ]; then
    echo "==> installing system packages: $*"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@"
  fi
}

# The reviewer UI is served from ui/dist; build it once if it is missing.
ensure_ui() {
  [ -f ui/dist/index.html ] && return 0
  if command -v npm >/dev/null 2>&1; then
    echo "==> building the reviewer UI (ui/dist)"
    (cd ui && npm ci --no-audit --no-fund && npm run build)
  else
    echo "note: the reviewer UI is not built and npm is missing; install Node.js 20.19+ and run" >&2
    echo "      (cd ui && npm ci && npm run build) for the pages (the API works without them)" >&2
  fi
}

command -v cc >/dev/null 2>&1 || install_missing build-essential

mode="cli"
if [ $# -eq 0 ]; then
  if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
    mode="desktop"
  else
    echo "No display here (DISPLAY and WAYLAND_DISPLAY are unset), so the desktop app cannot open its window."
    echo "Serving the API and the reviewer UI to a browser instead (\`gatehouse serve\`); \`scripts/run.sh demo\`"
    echo "adds a simulated fleet of agents. Open the one-time sign-in link it prints (it works once, for 10 minutes)."
    set -- serve
  fi
elif [ "$1" = "desktop" ]; then
  mode="desktop"
  shift
fi

ensure_ui
if [ "$mode" = "desktop" ]; then
  need=()
  command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
  for pair in webkit2gtk-4.1:libwebkit2gtk-4.1-dev javascriptcoregtk-4.1:libjavascriptcoregtk-4.1-dev \
    libsoup-3.0:libsoup-3.0-dev gtk+-3.0:libgtk-3-dev ayatana-appindicator3-0.1:libayatana-appindicator3-dev \
    librsvg-2.0:librsvg2-dev; do
    pkg-config --exists "${pair%%:*}" 2>/dev/null || need+=("${pair#*:}")
  done
  install_missing "${need[@]}"
  exec cargo run --release --locked -q -p gatehouse-desktop -- "$@"
fi
exec cargo run --release --locked -q -p gatehouse-cli -- "$@"
