#!/usr/bin/env bash
# Runs every Gatehouse test: formatting, lints (warnings are errors), the
# headless engine on its own on SQLite and on PostgreSQL (a throwaway cluster
# on loopback), the whole workspace with the team-server tests, the server's
# tests again on PostgreSQL, the reviewer UI (its
# types against the server's OpenAPI document, svelte-check, unit tests,
# build), the Python client and its LangGraph adapter (real langgraph and
# langchain), the MCP interop tests (the official Python mcp SDK), the browser
# end-to-end tests in headless Chromium and the desktop app's real-window
# test under Xvfb. Installs what it needs on a fresh Debian or Ubuntu
# machine.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
# The browser tests drive Debian's Chromium; no test tool downloads a browser.
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
# The desktop app (Tauri 2 on WebKitGTK) and its real-window test under Xvfb.
for pair in webkit2gtk-4.1:libwebkit2gtk-4.1-dev javascriptcoregtk-4.1:libjavascriptcoregtk-4.1-dev \
  libsoup-3.0:libsoup-3.0-dev gtk+-3.0:libgtk-3-dev ayatana-appindicator3-0.1:libayatana-appindicator3-dev \
  librsvg-2.0:librsvg2-dev; do
  pkg-config --exists "${pair%%:*}" 2>/dev/null || need_apt+=("${pair#*:}")
done
command -v WebKitWebDriver >/dev/null 2>&1 || need_apt+=(webkit2gtk-driver)
command -v xvfb-run >/dev/null 2>&1 || need_apt+=(xvfb)
command -v xauth >/dev/null 2>&1 || need_apt+=(xauth)
command -v dbus-daemon >/dev/null 2>&1 || need_apt+=(dbus)
# The desktop test answers the app's save dialog at the keyboard.
command -v xdotool >/dev/null 2>&1 || need_apt+=(xdotool)
# The team-server desktop test keeps its token in a real Secret Service:
# GNOME Keyring on the test's private session bus; secret-tool reads it.
command -v gnome-keyring-daemon >/dev/null 2>&1 || need_apt+=(gnome-keyring)
command -v secret-tool >/dev/null 2>&1 || need_apt+=(libsecret-tools)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "==> installing system packages: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo is not installed; install Rust (https://rustup.rs) and run this again" >&2
  exit 1
fi
# Vite 8 needs Node.js 20.19 or newer (Debian 12's own nodejs is 18).
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
  echo "error: the UI needs Node.js 20.19 or newer, found $(node --version); install a newer nodejs and run this again" >&2
  exit 1
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
# The desktop test drives the app's window through tauri-driver.
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if ! command -v tauri-driver >/dev/null 2>&1; then
  echo "==> installing tauri-driver"
  cargo install tauri-driver --locked
fi
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
# Incremental compilation caches serve edit-and-rebuild loops, not one
# build of each feature set; in a fresh clone they were 4.7 GB of disk.
export CARGO_INCREMENTAL=0
echo "==> a throwaway PostgreSQL cluster on loopback (installed from the system packages when missing)"
pg_dir=$(mktemp -d /tmp/gatehouse-pg.XXXXXX)
trap 'scripts/postgres.sh stop "$pg_dir"' EXIT
eval "$(scripts/postgres.sh start "$pg_dir")"

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
echo "==> the engine's tests again, on PostgreSQL"
GATEHOUSE_TEST_BACKEND=postgres cargo test -p gatehouse-engine --locked
echo "==> the whole workspace (the team-server tests on PostgreSQL, the rest on SQLite)"
cargo test --workspace --locked
echo "==> the server's tests again, on PostgreSQL"
GATEHOUSE_TEST_BACKEND=postgres cargo test -p gatehouse-server --locked

echo "==> the gatehouse binary (the UI's OpenAPI check, the Python and MCP interop and the browser tests run it)"
cargo build -p gatehouse-cli --locked
echo "==> the Python client and LangGraph interop tests (real langgraph and langchain, gatehouse serve)"
scripts/python-env.sh
target/pyenv/bin/python -m pytest -q clients/python/tests
echo "==> MCP interop tests (the official Python mcp SDK: gatehouse mcp on stdio and /mcp over HTTP, gatehouse serve)"
target/pyenv/bin/python -m pytest -q tests/interop/mcp
echo "==> schema-driven fuzzing (schemathesis against gatehouse serve with each role's token: no 5xx, every answer as the OpenAPI document says)"
[ -x target/fuzzenv/bin/python ] || python3 -m venv target/fuzzenv
target/fuzzenv/bin/python -m pip install -q --disable-pip-version-check -r tests/fuzz/requirements.txt
target/fuzzenv/bin/python tests/fuzz/fuzz.py target/debug/gatehouse 15
echo "==> the reviewer UI: OpenAPI document and types current, svelte-check, unit tests, build"
(cd ui && npm ci --no-audit --no-fund && npm run check:openapi && npm run check:api && npm run check && npm test && npm run build)
echo "==> browser end-to-end tests (Playwright, headless Chromium, gatehouse serve)"
(cd tests/e2e && npm ci --no-audit --no-fund && npm test)
echo "==> desktop end-to-end tests (the real Tauri window under Xvfb, tauri-driver, WebKitWebDriver; a team server with the token in GNOME Keyring; single instance; the tray menu over D-Bus)"
xvfb-run -a cargo test -p gatehouse-desktop --features e2e --locked --test desktop_window --test team_server --test single_instance --test tray
