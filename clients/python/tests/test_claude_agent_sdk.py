"""The Claude Agent SDK adapter with the real ``claude-agent-sdk`` package:
the ``can_use_tool`` callback, called directly with the SDK's own
``ToolPermissionContext`` and through the SDK's own control-protocol handler
over a recording transport (the SDK's CLI needs a network this machine lacks)."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import AsyncIterator
from typing import Any

from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny, ToolPermissionContext
from claude_agent_sdk._internal.query import Query
from claude_agent_sdk._internal.transport import Transport

from gatehouse.claude_agent_sdk import GatehousePermissions
from support import Reviewer, Server

RM = {"command": "rm -rf build/"}


def conversation() -> tuple[str, str]:
    c = f"cl-{uuid.uuid4().hex[:10]}"
    return c, f"claude-agent-sdk:{c}"


def context(tool_use_id: str = "toolu_01") -> ToolPermissionContext:
    return ToolPermissionContext(
        tool_use_id=tool_use_id,
        title="Claude wants to run rm -rf build/",
        description="Removes the build directory",
        decision_reason="Bash commands need approval",
    )


async def test_an_approval_allows_the_input_as_sent_and_finish_completes_the_run(
    server: Server, reviewer: Reviewer
) -> None:
    conv, session = conversation()
    decider = reviewer.decide_in_background(lambda g: {"action": "approve"}, session_id=session)
    async with server.aclient() as gh:
        permissions = GatehousePermissions(gh, conversation_id=conv, timeout=30)
        answer = await permissions("Bash", RM, context())
        await permissions.finish({"done": True})
    assert answer == PermissionResultAllow(updated_input=RM)
    gate = decider.finish()[0]
    assert gate["spec"] == {"kind": "approval", "action": "Bash"} and gate["payload"] == RM
    assert gate["text"].startswith("Claude wants to run rm -rf build/") and "Bash commands need approval" in gate["text"]
    runs = reviewer.http.get("/runs", params={"limit": 500}).json()["runs"]
    assert [r["status"] for r in runs if r["session_id"] == session] == ["completed"]


async def test_an_edit_allows_the_edited_input_and_a_rejection_denies_with_the_reason(
    server: Server, reviewer: Reviewer
) -> None:
    conv, session = conversation()
    answers = iter([
        {"action": "edit", "payload": {"command": "rm -rf build/tmp"}},
        {"action": "reject", "text": "keep the build"},
    ])
    reviewer.decide_in_background(lambda g: next(answers), session_id=session, count=2)
    async with server.aclient() as gh:
        permissions = GatehousePermissions(gh, conversation_id=conv, timeout=30)
        edited = await permissions("Bash", RM, context("toolu_01"))
        denied = await permissions("Bash", RM, context("toolu_02"))
    assert edited == PermissionResultAllow(updated_input={"command": "rm -rf build/tmp"})
    assert denied == PermissionResultDeny(message="keep the build")


async def test_the_same_tool_use_asked_again_finds_its_gate_and_decision(server: Server, reviewer: Reviewer) -> None:
    conv, session = conversation()
    decider = reviewer.decide_in_background(lambda g: {"action": "reject", "text": "no"}, session_id=session)
    async with server.aclient() as gh:
        first = await GatehousePermissions(gh, conversation_id=conv, timeout=30)("Bash", RM, context())
        again = GatehousePermissions(gh, conversation_id=conv, timeout=30)  # a restarted process
        second = await again("Bash", RM, context())
    decider.finish()
    assert first == second == PermissionResultDeny(message="no")
    assert [g.id for g in again.gates_opened] == [decider.decided[0]["id"]]


async def test_a_cancelled_run_denies_and_interrupts_the_session(server: Server, reviewer: Reviewer) -> None:
    conv, session = conversation()

    def cancel() -> None:
        run = reviewer.run_of_session(session)
        reviewer.next_gate(run)
        reviewer.http.delete(f"/run/{run}", params={"reason": "stop"}).raise_for_status()

    t = threading.Thread(target=cancel)
    t.start()
    async with server.aclient() as gh:
        answer = await GatehousePermissions(gh, conversation_id=conv, timeout=30)("Bash", RM, context())
    t.join(10)
    assert isinstance(answer, PermissionResultDeny) and answer.interrupt


async def test_a_gatehouse_out_of_reach_denies_rather_than_allows() -> None:
    from gatehouse import AsyncClient, Retry

    async with AsyncClient("http://127.0.0.1:9", token="x", retry=Retry(attempts=1)) as gh:
        answer = await GatehousePermissions(gh, conversation_id="offline", timeout=5)("Bash", RM, context())
    assert isinstance(answer, PermissionResultDeny) and answer.interrupt
    assert "could not be asked" in answer.message


class RecordingTransport(Transport):
    """Takes the place of the CLI's pipes: records what the SDK writes back."""

    def __init__(self) -> None:
        self.written: list[dict[str, Any]] = []

    async def connect(self) -> None:
        pass

    async def write(self, data: str) -> None:
        self.written.append(json.loads(data))

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        raise NotImplementedError

    async def close(self) -> None:
        pass

    def is_ready(self) -> bool:
        return True

    async def end_input(self) -> None:
        pass


async def test_the_sdks_own_permission_request_is_answered_with_the_reviewers_edit(
    server: Server, reviewer: Reviewer
) -> None:
    conv, session = conversation()
    reviewer.decide_in_background(lambda g: {"action": "edit", "payload": {"command": "ls build/"}}, session_id=session)
    transport = RecordingTransport()
    async with server.aclient() as gh:
        query = Query(transport, is_streaming_mode=True, can_use_tool=GatehousePermissions(gh, conversation_id=conv, timeout=30))
        await query._handle_control_request({
            "type": "control_request",
            "request_id": "req-1",
            "request": {"subtype": "can_use_tool", "tool_name": "Bash", "input": RM, "tool_use_id": "toolu_09",
                        "permission_suggestions": None, "title": "Claude wants to run rm -rf build/"},
        })  # type: ignore[arg-type]
    (reply,) = transport.written
    assert reply["response"] == {
        "subtype": "success", "request_id": "req-1", "response": {"behavior": "allow", "updatedInput": {"command": "ls build/"}},
    }


async def test_a_wait_that_runs_out_denies_without_interrupting_and_leaves_the_gate_open(
    server: Server, reviewer: Reviewer
) -> None:
    conv, session = conversation()
    async with server.aclient() as gh:
        permissions = GatehousePermissions(gh, conversation_id=conv, timeout=0.5)
        answer = await permissions("Bash", RM, context())
    assert isinstance(answer, PermissionResultDeny) and not answer.interrupt
    assert "in time" in answer.message
    assert [g["status"] for g in reviewer.gates(reviewer.run_of_session(session), "all")] == ["pending"]


async def test_a_released_gate_denies_without_interrupting_and_never_allows(server: Server, reviewer: Reviewer) -> None:
    conv, session = conversation()

    def release() -> None:
        run = reviewer.run_of_session(session)
        reviewer.next_gate(run)
        reviewer.http.post(f"/run/{run}/resume", json={}).raise_for_status()

    t = threading.Thread(target=release)
    t.start()
    async with server.aclient() as gh:
        answer = await GatehousePermissions(gh, conversation_id=conv, timeout=30)("Bash", RM, context())
    t.join(10)
    assert isinstance(answer, PermissionResultDeny) and not answer.interrupt
    assert "without deciding" in answer.message
    run = reviewer.run_of_session(session)
    assert [g["status"] for g in reviewer.gates(run, "all")] == ["pending"]
    assert reviewer.http.get(f"/run/{run}/status").json()["status"] == "active"
