#!/usr/bin/env bash
# Runs every Gatehouse test: formatting, lints (warnings are errors), the
# headless engine on its own, the whole workspace, the reviewer UI (its
# types against the server's OpenAPI document, svelte-check, unit tests,
# build) and the browser end-to-end tests in headless Chromium. Installs
# what it needs on a fresh Debian or Ubuntu machine.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
# The browser tests drive Debian's Chromium; no test tool downloads a browser.
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
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
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

echo "==> cargo fmt --check"
cargo fmt --all --check
echo "==> cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "==> the engine alone: no Tauri, no webview, no network"
cargo test -p gatehouse-engine --locked
echo "==> the whole workspace"
cargo test --workspace --locked

echo "==> the gatehouse binary (the UI's OpenAPI check and the browser tests run it)"
cargo build -p gatehouse-cli --locked
echo "==> the reviewer UI: OpenAPI document and types current, svelte-check, unit tests, build"
(cd ui && npm ci --no-audit --no-fund && npm run check:openapi && npm run check:api && npm run check && npm test && npm run build)
echo "==> browser end-to-end tests (Playwright, headless Chromium, gatehouse serve)"
(cd tests/e2e && npm ci --no-audit --no-fund && npm test)
