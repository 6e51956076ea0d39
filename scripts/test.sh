#!/usr/bin/env bash
# Runs every Gatehouse test: formatting, lints (warnings are errors), the
# headless engine on its own, and the whole workspace. Installs what it
# needs on a fresh Debian or Ubuntu machine.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
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
rustup component add rustfmt clippy >/dev/null 2>&1 || true

echo "==> cargo fmt --check"
cargo fmt --all --check
echo "==> cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "==> the engine alone: no Tauri, no webview, no network"
cargo test -p gatehouse-engine --locked
echo "==> the whole workspace"
cargo test --workspace --locked
