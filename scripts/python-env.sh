#!/usr/bin/env bash
# Makes the Python environment the interop tests run in: a virtual
# environment at target/pyenv holding tests/interop/requirements.txt (pinned
# PyPI packages: langgraph, langchain, the agent frameworks, the mcp SDK, pytest...) and the Python
# client (clients/python, editable). Installs Debian's python3-venv when
# `python3 -m venv` cannot work. Running it again reinstalls only when the
# requirements or the client's pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/pyenv
reqs=tests/interop/requirements.txt
stamp="$venv/.installed"

install_venv_support() {
  echo "==> installing python3-venv"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3 python3-venv
}

command -v python3 >/dev/null 2>&1 || install_venv_support
if [ ! -x "$venv/bin/python" ]; then
  echo "==> creating $venv"
  # Debian's python3 has no ensurepip (so no venv) until python3-venv is installed.
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    install_venv_support
    python3 -m venv "$venv"
  fi
fi

want=$(cat "$reqs" clients/python/pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "==> installing the interop test packages into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$reqs" -e clients/python
  echo "$want" >"$stamp"
fi
