"""An MCP session's run ends with the session: over `/mcp` when the client
closes it (the SDK's `DELETE /mcp`), over stdio when the client goes away.
A run that finished its work is completed; one left with an open question
is cancelled with the reason "MCP session closed" (an agent token, which may
not cancel runs over the API, fails it with that reason over stdio); a run
the session only named is left alone."""

from __future__ import annotations

import time

import anyio
import pytest

from conftest import WAIT, mcp_session, review

pytestmark = pytest.mark.anyio
TRANSPORTS = pytest.mark.parametrize("transport", ["stdio", "http"])


async def call(session, tool: str, arguments: dict):
    with anyio.fail_after(WAIT):
        return await session.call_tool(tool, arguments)


def run_once_ended(server, run_id: str) -> dict:
    """The run's status once it has left created, active or awaiting_human (polled: the end runs after the close)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        status = server.api("GET", f"/run/{run_id}/status")
        if status["status"] in ("completed", "failed", "cancelled"):
            return status
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} is still {status['status']} after the session closed")


@TRANSPORTS
async def test_a_session_that_closes_with_a_question_open_ends_its_run_and_withdraws_the_gate(server, transport):
    async with mcp_session(server, transport) as session:
        opened = await call(session, "ask_human", {"question": "Which region?", "mode": "async"})
    run_id, gate_id = opened.structured_content["run_id"], opened.structured_content["gate_id"]
    ended = run_once_ended(server, run_id)
    # Over stdio the agent token ends its run through the API, where an agent may fail its run but not cancel it.
    assert ended["status"] == ("cancelled" if transport == "http" else "failed"), ended
    assert ended["status_reason"] == "MCP session closed"
    assert server.api("GET", f"/gates/{gate_id}")["gate"]["status"] == "cancelled"


async def test_a_reviewer_tokens_stdio_session_cancels_its_unfinished_run(server):
    async with mcp_session(server, "stdio", token=server.reviewer_token) as session:
        opened = await call(session, "ask_human", {"question": "Which zone?", "mode": "async"})
    ended = run_once_ended(server, opened.structured_content["run_id"])
    assert (ended["status"], ended["status_reason"]) == ("cancelled", "MCP session closed")


@TRANSPORTS
async def test_a_session_whose_questions_were_all_answered_completes_its_run(server, transport):
    decided = review(server, {"action": "approve"}, delay=0)
    async with mcp_session(server, transport) as session:
        approved = await call(session, "request_approval", {"action": "restart the cache"})
    decided.result(WAIT)
    assert approved.structured_content["decision"] == "approve"
    ended = run_once_ended(server, approved.structured_content["run_id"])
    assert ended["status"] == "completed" and ended["status_reason"] is None, ended


async def test_a_run_a_session_only_named_is_not_ended_by_it(server):
    async with mcp_session(server, "http", client_name="owner") as owner:
        opened = await call(owner, "ask_human", {"question": "Owner's question?", "mode": "async"})
        run_id = opened.structured_content["run_id"]
        async with mcp_session(server, "http", client_name="visitor") as visitor:
            named = await call(visitor, "ask_human", {"question": "Visitor's?", "mode": "async", "run_id": run_id})
            assert named.structured_content["run_id"] == run_id
        # The visitor closed: the owner's run and both questions stay open.
        assert server.api("GET", f"/run/{run_id}/status")["status"] == "active"
        assert server.api("GET", f"/gates/{named.structured_content['gate_id']}")["gate"]["status"] == "pending"
    assert run_once_ended(server, run_id)["status_reason"] == "MCP session closed"
