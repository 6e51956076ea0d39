"""Fixtures for the MCP interop tests: a real `gatehouse serve` on a free
port over a temporary database, agent and reviewer tokens made with
`gatehouse token create`, a scripted reviewer deciding gates over the REST
API, and MCP sessions of the official Python SDK over stdio (`gatehouse
mcp`) or streamable HTTP (`/mcp`)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import urllib.request
from concurrent.futures import Future
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

REPO = Path(__file__).resolve().parents[3]
GATEHOUSE = Path(os.environ.get("GATEHOUSE_BIN", REPO / "target" / "debug" / "gatehouse"))
# Every wait in these tests gives up after this long.
WAIT = 30.0


@dataclass
class Server:
    url: str
    db: Path
    agent_token: str
    reviewer_token: str

    def api(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.url}/api/hitl{path}",
            method=method,
            data=data,
            headers={"Authorization": f"Bearer {token or self.reviewer_token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            return json.load(response)


def _token(db: Path, role: str, name: str) -> str:
    out = subprocess.run(
        [str(GATEHOUSE), "token", "create", "--role", role, "--name", name, "--db", str(db)],
        capture_output=True, text=True, check=True, timeout=WAIT,
    )
    return out.stdout.strip()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def serve(db: Path, bind: str = "127.0.0.1:0") -> tuple[subprocess.Popen, str]:
    """Starts `gatehouse serve` on `db` and returns it with the URL it announced."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEHOUSE_")}
    process = subprocess.Popen(
        [str(GATEHOUSE), "serve", "--bind", bind, "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        if "listening on " in line:
            return process, line.strip().rsplit(" ", 1)[-1]
    process.kill()
    pytest.fail("gatehouse serve did not say where it listens")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def server(tmp_path: Path) -> Server:
    if not GATEHOUSE.exists():
        pytest.fail(f"{GATEHOUSE} is missing: run `cargo build -p gatehouse-cli` first")
    db = tmp_path / "gatehouse.db"
    agent, reviewer = _token(db, "agent", "assistant"), _token(db, "reviewer", "alice")
    process, url = serve(db)
    yield Server(url=url, db=db, agent_token=agent, reviewer_token=reviewer)
    stop(process)


@dataclass
class Decided:
    """What the reviewer saw and when its decision was committed."""

    gate: dict
    committed_at: float


def review(
    server: Server,
    decision: dict,
    *,
    delay: float = 0.6,
    matching: Callable[[dict], bool] = lambda gate: True,
) -> "Future[Decided]":
    """Decides the first pending gate that `matches`, `delay` seconds after it
    appears (so the agent has to wait), on a thread of its own."""
    future: Future[Decided] = Future()

    def run() -> None:
        try:
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline:
                for summary in server.api("GET", "/gates")["gates"]:
                    detail = server.api("GET", f"/gates/{summary['id']}")
                    if matching(detail["gate"]):
                        time.sleep(delay)
                        server.api("POST", f"/gates/{summary['id']}/resolve", decision)
                        future.set_result(Decided(detail["gate"], time.monotonic()))
                        return
                time.sleep(0.02)
            raise TimeoutError("no pending gate appeared for the reviewer")
        except BaseException as e:  # noqa: BLE001 - handed to the test
            future.set_exception(e)

    threading.Thread(target=run, daemon=True).start()
    return future


@asynccontextmanager
async def mcp_session(server: Server, transport: str, client_name: str = "claude-code",
                      token: str | None = None) -> AsyncIterator[ClientSession]:
    """An initialized MCP session named `client_name`, over `gatehouse mcp`
    (stdio) or the server's `/mcp` (http)."""
    token = token or server.agent_token
    info = Implementation(name=client_name, version="1.0.0")
    if transport == "stdio":
        env = {"GATEHOUSE_TOKEN": token, "GATEHOUSE_URL": server.url, "GATEHOUSE_LOG": os.environ.get("GATEHOUSE_LOG", "warn")}
        params = StdioServerParameters(command=str(GATEHOUSE), args=["mcp", "--progress-every", "0.2"], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=info, read_timeout_seconds=WAIT) as session:
                await session.initialize()
                yield session
    else:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(WAIT, read=300)) as http:
            async with streamable_http_client(f"{server.url}/mcp", http_client=http) as (read, write):
                async with ClientSession(read, write, client_info=info, read_timeout_seconds=WAIT) as session:
                    await session.initialize()
                    yield session
