"""A call waiting in `gatehouse mcp` survives the server restarting (the
desktop app quit and opened again): it keeps trying, says so in its
progress notifications, and gets the decision made after the restart."""

from __future__ import annotations

import socket
import time

import anyio
import pytest

from conftest import WAIT, mcp_session, serve, stop

pytestmark = pytest.mark.anyio


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_a_waiting_call_gets_the_decision_made_after_the_server_restarts(server):
    # The fixture's server is replaced by one on a port that can be bound again.
    port = free_port()
    process, url = serve(server.db, f"127.0.0.1:{port}")
    server.url = url
    progress: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with mcp_session(server, "stdio") as session:
        result: dict = {}

        async def ask() -> None:
            result["answer"] = await session.call_tool(
                "request_approval", {"action": "migrate the database"}, progress_callback=on_progress)

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(ask)
                while not server.api("GET", "/gates")["gates"]:
                    await anyio.sleep(0.05)
                gate_id = server.api("GET", "/gates")["gates"][0]["id"]
                stop(process)
                while not any("cannot be reached" in m for m in progress):
                    await anyio.sleep(0.05)
                process, _ = serve(server.db, f"127.0.0.1:{port}")
                restarted = time.monotonic()
                server.api("POST", f"/gates/{gate_id}/resolve", {"action": "approve", "text": "after the restart"})
    stop(process)
    outcome = result["answer"].structured_content
    assert outcome["gate_id"] == gate_id
    assert outcome["decision"] == "approve" and outcome["message"] == "after the restart"
    assert any("cannot be reached" in m for m in progress)
    assert time.monotonic() - restarted < 5
