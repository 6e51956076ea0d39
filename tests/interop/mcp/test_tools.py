"""Gatehouse's MCP tools driven by the official Python `mcp` SDK, over
stdio (`gatehouse mcp` talking to a real `gatehouse serve`) and over
streamable HTTP (`/mcp` on that server), while a scripted reviewer decides
each gate through the REST API."""

from __future__ import annotations

import hashlib
import json
import time

import anyio
import jsonschema
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

import httpx2
from conftest import WAIT, mcp_session, review

pytestmark = pytest.mark.anyio
TRANSPORTS = pytest.mark.parametrize("transport", ["stdio", "http"])

TOOLS = {
    "request_approval", "ask_human", "request_feedback", "request_review", "request_permission", "check_gate",
    "plan_read", "plan_add_task", "plan_update_task", "plan_assign_task", "plan_estimate_duration",
    "plan_set_dependencies", "plan_propose",
}


def text(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def of_kind(kind: str):
    return lambda gate: gate["spec"]["kind"] == kind


async def call(session, tool: str, arguments: dict, progress: list | None = None):
    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        if progress is not None:
            progress.append((value, message))

    with anyio.fail_after(WAIT):
        return await session.call_tool(tool, arguments, progress_callback=on_progress)


@TRANSPORTS
async def test_every_tool_is_listed_with_a_precise_schema(server, transport):
    async with mcp_session(server, transport) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        schema = tool.input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object", name
        assert "$ref" not in json.dumps(schema), name
        assert tool.description and len(tool.description) > 30, name
        for field, prop in schema.get("properties", {}).items():
            assert len(prop.get("description", "")) > 10, f"{name}.{field} is not described"
    permission = tools["request_permission"].input_schema
    assert set(permission["properties"]) == {"tool_name", "input", "tool_use_id"}
    assert permission["required"] == ["tool_name", "input"]
    assert permission["properties"]["input"]["type"] == "object"
    approval = jsonschema.Draft202012Validator(tools["request_approval"].input_schema)
    assert tools["request_approval"].input_schema["required"] == ["action"]
    assert tools["request_approval"].input_schema["properties"]["mode"]["enum"] == ["sync", "async"]
    approval.validate({"action": "deploy", "context": {"build": 42}, "mode": "async", "urgency": "high"})
    with pytest.raises(jsonschema.ValidationError):
        approval.validate({"action": "deploy", "urgency": "whenever"})
    with pytest.raises(jsonschema.ValidationError):
        approval.validate({"context": {}})
    task = tools["plan_propose"].input_schema["properties"]["tasks"]["items"]
    assert task["required"] == ["task_id", "description"]


@TRANSPORTS
async def test_an_approval_blocks_until_the_reviewer_edits_it_with_progress_while_waiting(server, transport):
    decided = review(server, {"action": "edit", "payload": {"build": 42, "target": "staging"}},
                     matching=of_kind("approval"))
    progress: list = []
    async with mcp_session(server, transport) as session:
        result = await call(session, "request_approval",
                            {"action": "deploy build 42", "context": {"build": 42, "target": "prod"},
                             "reason": "The release train leaves at 5."}, progress)
        arrived = time.monotonic()
    seen = decided.result(WAIT)
    assert seen.gate["payload"] == {"build": 42, "target": "prod"}
    assert "The release train leaves at 5." in seen.gate["text"]
    assert not result.is_error, text(result)
    outcome = result.structured_content
    assert outcome["decision"] == "edit" and outcome["proceed"] is True
    assert outcome["decided_by"] == "alice"
    assert outcome["payload"] == {"build": 42, "target": "staging"}
    assert text(result).startswith("Approved by alice with changes")
    assert progress, "progress notifications while the reviewer took 0.6 s"
    assert [p for p, _ in progress] == sorted({p for p, _ in progress}), "progress must increase"
    assert outcome["gate_id"] in progress[0][1]
    if transport == "stdio":
        assert len(progress) >= 2, f"--progress-every 0.2 over a 0.6 s wait: {progress}"
    latency = arrived - seen.committed_at
    print(f"{transport}: the decision reached the tool {latency * 1000:.0f} ms after it was committed")
    assert latency < 2.0


@TRANSPORTS
async def test_ask_human_returns_the_answer(server, transport):
    decided = review(server, {"action": "respond", "text": "Use eu-west-1."}, matching=of_kind("question"))
    async with mcp_session(server, transport) as session:
        result = await call(session, "ask_human", {"question": "Which region?", "context": "Two are configured.",
                                                   "options": ["eu-west-1", "us-east-1"], "urgency": "high"})
    gate = decided.result(WAIT).gate
    assert gate["priority"] == "high" and gate["mode"] == "sync"
    assert "eu-west-1" in gate["text"] and "Two are configured." in gate["text"]
    assert result.structured_content["decision"] == "respond"
    assert result.structured_content["message"] == "Use eu-west-1."
    assert "answered: Use eu-west-1." in text(result)


@TRANSPORTS
async def test_request_feedback_returns_the_feedback(server, transport):
    decided = review(server, {"action": "respond", "text": "Shorten the intro."}, matching=of_kind("question"))
    async with mcp_session(server, transport) as session:
        result = await call(session, "request_feedback",
                            {"artifact": "# Launch post\n\nLong intro...", "questions": ["Is the tone right?"]})
    gate = decided.result(WAIT).gate
    assert gate["payload"]["questions"] == ["Is the tone right?"]
    assert "Is the tone right?" in gate["text"] and "Launch post" in gate["text"]
    assert result.structured_content["message"] == "Shorten the intro."


@TRANSPORTS
async def test_request_review_returns_the_reviewers_version_of_the_output(server, transport):
    decided = review(server, {"action": "edit", "payload": {"audited": "Dear Ann, your refund is on its way."}},
                     matching=of_kind("response_review"))
    async with mcp_session(server, transport) as session:
        result = await call(session, "request_review",
                            {"output": "hey ann, refund coming", "original": "hey ann (card 4111...), refund coming",
                             "indicators": ["informal tone"], "summary": "Reply to a refund request"})
    gate = decided.result(WAIT).gate
    assert gate["spec"]["audited"] == "hey ann, refund coming"
    assert gate["spec"]["indicators"] == ["informal tone"]
    outcome = result.structured_content
    assert outcome["decision"] == "edit"
    assert outcome["output"] == "Dear Ann, your refund is on its way."


@TRANSPORTS
async def test_a_rejection_is_a_clear_result_not_an_error(server, transport):
    decided = review(server, {"action": "reject", "text": "Not during the freeze."}, matching=of_kind("approval"))
    async with mcp_session(server, transport) as session:
        result = await call(session, "request_approval", {"action": "drop the users table"})
    decided.result(WAIT)
    assert result.is_error is False
    assert result.structured_content["proceed"] is False
    assert result.structured_content["decision"] == "reject"
    assert text(result).startswith("Rejected by alice. Do not proceed with this. Reason: Not during the freeze.")


@TRANSPORTS
async def test_async_mode_returns_a_gate_id_and_check_gate_gets_the_decision(server, transport):
    async with mcp_session(server, transport) as session:
        opened = await call(session, "request_approval", {"action": "rotate keys", "mode": "async"})
        assert opened.structured_content["status"] == "pending"
        gate_id = opened.structured_content["gate_id"]
        now = await call(session, "check_gate", {"gate_id": gate_id})
        assert now.structured_content["status"] == "pending"
        assert "check_gate" in text(now)
        decided = review(server, {"action": "approve", "text": "go"}, matching=lambda g: g["id"] == gate_id)
        answered = await call(session, "check_gate", {"gate_id": gate_id, "wait_seconds": 20})
    assert decided.result(WAIT).gate["mode"] == "async"
    assert answered.structured_content["status"] == "resolved"
    assert answered.structured_content["decision"] == "approve"
    assert answered.structured_content["kind"] == "approval"


@TRANSPORTS
async def test_a_permission_prompt_is_allowed_with_the_reviewers_edit(server, transport):
    decided = review(server, {"action": "edit", "payload": {"command": "rm -rf build/tmp"}},
                     matching=of_kind("approval"))
    async with mcp_session(server, transport) as session:
        result = await call(session, "request_permission",
                            {"tool_name": "Bash", "input": {"command": "rm -rf build"}, "tool_use_id": "toolu_01"})
    gate = decided.result(WAIT).gate
    assert gate["payload"] == {"command": "rm -rf build"}
    assert gate["spec"]["action"] == "Bash"
    assert "rm -rf build" in gate["text"]
    # The server keeps only the key's SHA-256.
    assert gate["idempotency_key"] == hashlib.sha256(b"permission:toolu_01").hexdigest()
    assert not result.is_error
    assert json.loads(result.content[0].text) == {"behavior": "allow", "updatedInput": {"command": "rm -rf build/tmp"}}


@TRANSPORTS
async def test_a_permission_prompt_is_denied_with_the_reviewers_reason(server, transport):
    decided = review(server, {"action": "reject", "text": "Never force-push main."}, matching=of_kind("approval"))
    async with mcp_session(server, transport) as session:
        result = await call(session, "request_permission",
                            {"tool_name": "Bash", "input": {"command": "git push --force origin main"}})
    decided.result(WAIT)
    assert json.loads(result.content[0].text) == {
        "behavior": "deny", "message": "Denied by alice in Gatehouse: Never force-push main."}


@TRANSPORTS
async def test_the_plan_tools_share_the_plan_with_the_reviewer(server, transport):
    approved = review(server, {"action": "approve"}, matching=of_kind("plan_review"))
    async with mcp_session(server, transport) as session:
        proposed = await call(session, "plan_propose", {
            "tasks": [{"task_id": "t1", "description": "Read the code"},
                      {"task_id": "t2", "description": "Write the fix", "dependencies": ["t1"], "priority": "high"}],
            "success_criteria": ["all tests pass"], "note": "Small fix."})
        run_id = proposed.structured_content["run_id"]
        steps = [
            ("plan_add_task", {"description": "Open a pull request", "task_id": "t3", "dependencies": ["t1"]}),
            ("plan_set_dependencies", {"task_id": "t3", "dependencies": ["t2"]}),
            ("plan_assign_task", {"task_id": "t2", "agent_name": "coder"}),
            ("plan_estimate_duration", {"task_id": "t2", "duration": "30m"}),
            ("plan_update_task", {"task_id": "t1", "status": "completed", "metadata": {"notes": "done"}}),
        ]
        for tool, arguments in steps:
            changed = await call(session, tool, arguments)
            assert not changed.is_error, f"{tool}: {text(changed)}"
        read = (await call(session, "plan_read", {})).structured_content
        cycle = await call(session, "plan_set_dependencies", {"task_id": "t1", "dependencies": ["t3"]})
    review_gate = approved.result(WAIT).gate
    assert review_gate["spec"]["plan_revision"] == 1
    assert [t["task_id"] for t in review_gate["payload"]["tasks"]] == ["t1", "t2"]
    assert proposed.structured_content["decision"] == "approve"
    assert read["run_id"] == run_id
    tasks = {t["task_id"]: t for t in read["plan"]["tasks"]}
    assert tasks["t2"]["assigned_agent"] == "coder" and tasks["t2"]["estimated_duration"] == "30m"
    assert tasks["t3"]["dependencies"] == ["t2"]
    assert tasks["t1"]["status"] == "completed" and tasks["t1"]["metadata"] == {"notes": "done"}
    assert read["ready_tasks"] == ["t2"] and read["progress"]["completed"] == 1
    assert server.api("GET", f"/runs/{run_id}/plan")["plan"]["plan"] == read["plan"]
    assert cycle.is_error and "cycle" in text(cycle)


@TRANSPORTS
async def test_a_session_asks_in_one_run_named_after_the_client(server, transport):
    reviewer_token = server.reviewer_token
    async with mcp_session(server, transport, client_name="cursor", token=reviewer_token) as session:
        first = await call(session, "ask_human", {"question": "One?", "mode": "async"})
        second = await call(session, "ask_human", {"question": "Two?", "mode": "async"})
    assert first.structured_content["run_id"] == second.structured_content["run_id"]
    run = server.api("GET", f"/run/{first.structured_content['run_id']}/state")
    assert "cursor" in json.dumps(run)
    async with mcp_session(server, transport, client_name="claude-code") as session:
        mine = await call(session, "ask_human", {"question": "Three?", "mode": "async"})
        peek = await call(session, "check_gate", {"gate_id": first.structured_content["gate_id"]})
    assert mine.structured_content["run_id"] != first.structured_content["run_id"]
    assert peek.is_error and peek.structured_content["error"] == "forbidden", text(peek)


@TRANSPORTS
async def test_bad_arguments_are_error_results_naming_the_field(server, transport):
    async with mcp_session(server, transport) as session:
        bad = await call(session, "request_approval", {"action": "deploy", "urgency": "whenever"})
        missing = await call(session, "request_permission", {"tool_name": "Bash"})
    assert bad.is_error and "urgency" in text(bad)
    assert missing.is_error and "input" in text(missing)


async def test_a_sessionless_client_over_http_keeps_its_run_and_gets_decisions(server):
    """The SDK's high-level Client negotiates protocol 2026-07-28: no
    session, every request on its own."""
    decided = review(server, {"action": "approve"}, matching=of_kind("approval"))
    headers = {"Authorization": f"Bearer {server.agent_token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(WAIT, read=300)) as http:
        transport = streamable_http_client(f"{server.url}/mcp", http_client=http)
        async with Client(transport, client_info=Implementation(name="modern", version="1")) as client:
            assert client.session.protocol_version == "2026-07-28"
            with anyio.fail_after(WAIT):
                approved = await client.call_tool("request_approval", {"action": "restart the cache"})
                asked = await client.call_tool("ask_human", {"question": "Which cache?", "mode": "async"})
    decided.result(WAIT)
    assert approved.structured_content["decision"] == "approve"
    assert asked.structured_content["run_id"] == approved.structured_content["run_id"]
