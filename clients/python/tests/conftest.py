"""A real ``gatehouse serve`` for the tests: one per session, on a free
loopback port, over a temporary database, with agent and reviewer tokens.

The binary is ``target/debug/gatehouse`` (``cargo build -p gatehouse-cli``),
or ``$GATEHOUSE_BIN``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from support import REPO, Reviewer, Server  # noqa: E402


def _binary() -> Path:
    path = Path(os.environ.get("GATEHOUSE_BIN", REPO / "target" / "debug" / "gatehouse"))
    if not path.exists():
        pytest.exit(f"{path} is missing: build it with `cargo build -p gatehouse-cli`", returncode=1)
    return path


def _token(binary: Path, db: Path, role: str, name: str) -> str:
    out = subprocess.run(
        [str(binary), "token", "create", "--role", role, "--name", name, "--db", str(db)],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    binary = _binary()
    db = tmp_path_factory.mktemp("gatehouse") / "gatehouse.db"
    tokens = {
        "agent": _token(binary, db, "agent", "py-agent"),
        "other_agent": _token(binary, db, "agent", "py-intruder"),
        "reviewer": _token(binary, db, "reviewer", "py-reviewer"),
    }
    proc = subprocess.Popen(
        [str(binary), "serve", "--bind", "127.0.0.1:0", "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    url = _listening_url(proc)
    srv = Server(url=url, db=db, binary=binary, **tokens)
    try:
        yield srv
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _listening_url(proc: subprocess.Popen[str]) -> str:
    found: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("Gatehouse listening on "):
                found.append(line.split(" on ", 1)[1].strip())
                break
        # Keep draining so the server never blocks on a full pipe.
        for _ in proc.stdout:
            pass

    threading.Thread(target=read, daemon=True).start()
    for _ in range(300):
        if found:
            return found[0]
        if proc.poll() is not None:
            raise RuntimeError(f"gatehouse serve exited with {proc.returncode}")
        threading.Event().wait(0.05)
    proc.kill()
    raise RuntimeError("gatehouse serve did not announce its address within 15 s")


@pytest.fixture
def reviewer(server: Server) -> Iterator[Reviewer]:
    r = Reviewer(server)
    try:
        yield r
    finally:
        r.close()
