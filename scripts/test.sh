#!/usr/bin/env bash
# Runs Gatehouse's tests. With no argument, every group below in this order
# (what CI runs, through .ci/run); `scripts/test.sh GROUP...` runs only those.
#   rust     formatting, lints (warnings are errors), no Tauri outside the
#            desktop app, the headless engine alone on SQLite, the whole
#            workspace (its team-server tests start their own PostgreSQL)
#   pg       the engine's and the server's tests again on PostgreSQL (a
#            throwaway cluster on loopback offering TLS with a certificate
#            made for it, so the TLS tests run; the restart tests start a
#            cluster of their own to restart)
#   python   the Python client and its LangGraph adapter (real langgraph and
#            langchain), the MCP interop tests (the official Python mcp SDK),
#            schema-driven fuzzing (schemathesis), each against a real
#            `gatehouse serve`
#   typescript  the TypeScript client (its types against the server's
#            OpenAPI document) and its adapters for the Vercel AI SDK,
#            LangGraph.js, OpenAI Agents JS and the MCP TypeScript SDK (the
#            real npm packages, no network), and the TypeScript examples,
#            each against a real `gatehouse serve`
#   ui       the reviewer UI: its types against the server's OpenAPI
#            document, svelte-check, unit tests, build
#   e2e      the browser end-to-end tests in headless Chromium
#   desktop  the desktop app's real-window tests under Xvfb
# Each group installs (on a fresh Debian or Ubuntu machine) and builds what
# it needs itself, so any one of them runs on its own.
set -euo pipefail
cd "$(dirname "$0")/.."

all_groups=(rust pg python typescript ui e2e desktop)
usage() {
  echo "usage: scripts/test.sh [GROUP...]   GROUP: ${all_groups[*]} (none: all of them)" >&2
  exit 2
}
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=("${all_groups[@]}")
for group in "${groups[@]}"; do
  [[ " ${all_groups[*]} " == *" $group "* ]] || usage
done

# --- what the groups need, each prepared once per run -------------------------

missing=()
# Notes the Debian package $2 as missing unless the command $1 exists.
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
install_missing() {
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "==> installing system packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
  missing=()
}

declare -A done_=()
once() { [ -z "${done_[$1]:-}" ] && done_[$1]=1; }

# Rust, a C toolchain and pkg-config: enough for the engine, server and CLI.
prepare_rust() {
  once rust || return 0
  need cc build-essential
  need pkg-config pkg-config
  install_missing
  if ! command -v cargo >/dev/null 2>&1; then
    echo "error: cargo is not installed; install Rust (https://rustup.rs) and run this again" >&2
    exit 1
  fi
  rustup component add rustfmt clippy >/dev/null 2>&1 || true
  # Incremental compilation caches serve edit-and-rebuild loops, not one
  # build of each feature set; in a fresh clone they were 4.7 GB of disk.
  export CARGO_INCREMENTAL=0
}

# The desktop app's libraries (Tauri 2 on WebKitGTK): the workspace's own
# build and lints include the app.
prepare_tauri_libraries() {
  once tauri || return 0
  prepare_rust
  local pair
  for pair in webkit2gtk-4.1:libwebkit2gtk-4.1-dev javascriptcoregtk-4.1:libjavascriptcoregtk-4.1-dev \
    libsoup-3.0:libsoup-3.0-dev gtk+-3.0:libgtk-3-dev ayatana-appindicator3-0.1:libayatana-appindicator3-dev \
    librsvg-2.0:librsvg2-dev; do
    pkg-config --exists "${pair%%:*}" 2>/dev/null || missing+=("${pair#*:}")
  done
  install_missing
}

# Node.js for the UI and the browser tests; no test tool downloads a browser.
prepare_node() {
  once node || return 0
  need node nodejs
  need npm npm
  install_missing
  # Vite 8 needs Node.js 20.19 or newer (Debian 12's own nodejs is 18).
  if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
    echo "error: the UI needs Node.js 20.19 or newer, found $(node --version); install a newer nodejs and run this again" >&2
    exit 1
  fi
  export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
}

# target/debug/gatehouse: the UI's OpenAPI check, the Python, TypeScript, MCP
# and fuzz tests, the browser tests and the desktop team-server test run it.
build_cli() {
  once cli || return 0
  prepare_rust
  echo "==> the gatehouse binary"
  cargo build -p gatehouse-cli --locked
}

# ui/dist, which `gatehouse serve` and the desktop app serve.
build_ui() {
  once ui-build || return 0
  prepare_node
  echo "==> the reviewer UI's build"
  (cd ui && npm ci --no-audit --no-fund && npm run build)
}

# --- the groups ----------------------------------------------------------------

test_rust() {
  prepare_tauri_libraries
  echo "==> cargo fmt --check"
  cargo fmt --all --check
  echo "==> cargo clippy (warnings are errors)"
  cargo clippy --workspace --all-targets --locked -- -D warnings
  cargo clippy -p gatehouse-desktop --all-targets --features e2e --locked -- -D warnings
  echo "==> only the desktop app depends on Tauri"
  if cargo tree -p gatehouse-cli -e normal --locked | grep -q ' tauri'; then
    echo "error: the engine, server or CLI now depends on Tauri; keep Tauri in src-tauri/" >&2
    exit 1
  fi
  echo "==> the engine alone: no Tauri, no webview, no HTTP (its tests on SQLite)"
  cargo test -p gatehouse-engine --locked
  echo "==> the whole workspace (the team-server tests on a throwaway PostgreSQL cluster of their own, the rest on SQLite)"
  cargo test --workspace --locked
}

test_pg() {
  prepare_rust
  need openssl openssl
  install_missing
  echo "==> a throwaway PostgreSQL cluster on loopback with TLS (installed from the system packages when missing)"
  local pg_dir
  pg_dir=$(mktemp -d /tmp/gatehouse-pg.XXXXXX)
  # shellcheck disable=SC2064 # the directory is fixed now
  trap "scripts/postgres.sh stop '$pg_dir'" EXIT
  eval "$(scripts/postgres.sh start "$pg_dir")"
  echo "==> the engine's tests on PostgreSQL"
  GATEHOUSE_TEST_BACKEND=postgres cargo test -p gatehouse-engine --locked
  echo "==> the server's tests on PostgreSQL"
  GATEHOUSE_TEST_BACKEND=postgres cargo test -p gatehouse-server --locked
  scripts/postgres.sh stop "$pg_dir"
  trap - EXIT
  unset GATEHOUSE_TEST_POSTGRES GATEHOUSE_TEST_POSTGRES_CA
}

test_python() {
  build_cli
  echo "==> the Python client and its agent-framework adapters (real langgraph, langchain, openai-agents, pydantic-ai, claude-agent-sdk; gatehouse serve)"
  scripts/python-env.sh
  target/pyenv/bin/python -m pytest -q clients/python/tests
  echo "==> MCP interop tests (the official Python mcp SDK: gatehouse mcp on stdio and /mcp over HTTP, gatehouse serve)"
  target/pyenv/bin/python -m pytest -q tests/interop/mcp
  echo "==> schema-driven fuzzing (schemathesis against gatehouse serve with each role's token: no 5xx, every answer as the OpenAPI document says)"
  [ -x target/fuzzenv/bin/python ] || python3 -m venv target/fuzzenv
  target/fuzzenv/bin/python -m pip install -q --disable-pip-version-check -r tests/fuzz/requirements.txt
  target/fuzzenv/bin/python tests/fuzz/fuzz.py target/debug/gatehouse 15
}

test_typescript() {
  prepare_node
  build_cli
  echo "==> the TypeScript client and its AI SDK, LangGraph.js, OpenAI Agents JS and MCP SDK interop tests, the examples (gatehouse serve)"
  (cd clients/typescript && npm ci --no-audit --no-fund && npm test)
}

test_ui() {
  build_cli
  prepare_node
  echo "==> the reviewer UI: OpenAPI document and types current, svelte-check, unit tests, build"
  (cd ui && npm ci --no-audit --no-fund && npm run check:openapi && npm run check:api && npm run check && npm test && npm run build)
  once ui-build || true
}

test_e2e() {
  prepare_node
  # The browser tests drive Debian's Chromium.
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  install_missing
  build_cli
  build_ui
  echo "==> browser end-to-end tests (Playwright, headless Chromium, gatehouse serve)"
  (cd tests/e2e && npm ci --no-audit --no-fund && npm test)
}

test_desktop() {
  prepare_tauri_libraries
  need WebKitWebDriver webkit2gtk-driver
  need xvfb-run xvfb
  need xauth xauth
  need dbus-daemon dbus
  # The desktop test answers the app's save dialog at the keyboard.
  need xdotool xdotool
  # The team-server desktop test keeps its token in a real Secret Service:
  # GNOME Keyring on the test's private session bus; secret-tool reads it.
  need gnome-keyring-daemon gnome-keyring
  need secret-tool libsecret-tools
  install_missing
  # The desktop test drives the app's window through tauri-driver.
  export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
  if ! command -v tauri-driver >/dev/null 2>&1; then
    echo "==> installing tauri-driver"
    cargo install tauri-driver --locked
  fi
  build_cli
  build_ui
  echo "==> desktop end-to-end tests (the real Tauri window under Xvfb, tauri-driver, WebKitWebDriver; a team server with the token in GNOME Keyring; single instance; the tray menu over D-Bus)"
  xvfb-run -a cargo test -p gatehouse-desktop --features e2e --locked --test desktop_window --test team_server --test single_instance --test tray --test team_tools
}

for group in "${groups[@]}"; do
  echo "==> group: $group"
  "test_$group"
done
