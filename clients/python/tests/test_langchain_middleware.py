"""langchain v1's HumanInTheLoopMiddleware through Gatehouse: a real agent
(``create_agent``) on langchain-core's fake chat model, which emits two
tool calls in one step, so no network is needed."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from gatehouse import Client
from gatehouse.langgraph import GatehouseHuman
from support import Reviewer, Server


class FakeModel(GenericFakeChatModel):
    """The fake chat model, able to pretend it bound the tools."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:
        return self


def make_agent(mode: str, ran: list[tuple[str, dict[str, Any]]]) -> Any:
    @tool
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        ran.append(("send_email", {"to": to, "body": body}))
        return f"sent to {to}"

    @tool
    def delete_file(path: str) -> str:
        """Delete a file."""
        ran.append(("delete_file", {"path": path}))
        return f"deleted {path}"

    replies = iter([
        AIMessage(
            content="",
            tool_calls=[
                {"name": "send_email", "args": {"to": "all@example.com", "body": "outage"}, "id": "call_1"},
                {"name": "delete_file", "args": {"path": "/srv/report.pdf"}, "id": "call_2"},
            ],
        ),
        AIMessage(content="All done."),
    ])
    middleware = HumanInTheLoopMiddleware(
        interrupt_on={"send_email": True, "delete_file": {"allowed_decisions": ["approve", "edit", "reject"]}},
        interrupt_mode=mode,  # type: ignore[arg-type]
    )
    return create_agent(FakeModel(messages=replies), tools=[send_email, delete_file], middleware=[middleware],
                        checkpointer=InMemorySaver())


def start() -> tuple[dict[str, Any], dict[str, Any], str]:
    thread_id = f"agent-{uuid.uuid4().hex[:10]}"
    return {"messages": [{"role": "user", "content": "Email everyone, then delete the report."}]}, \
        {"configurable": {"thread_id": thread_id}}, f"langgraph:{thread_id}"


@pytest.fixture
def gh(server: Server) -> Client:
    with server.client() as client:
        yield client  # type: ignore[misc]


def tool_results(final: dict[str, Any]) -> dict[str, str]:
    return {m.tool_call_id: str(m.content) for m in final["messages"] if isinstance(m, ToolMessage)}


def test_batched_actions_are_one_gate_the_first_approved_the_second_edited(gh: Client, reviewer: Reviewer) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    inputs, config, session = start()
    decider = reviewer.decide_in_background(
        lambda g: {"action": "edit", "actions": [
            {"id": "action-1", "action": "approve"},
            {"id": "action-2", "action": "edit", "args": {"path": "/srv/tmp/report.pdf"}},
        ]},
        session_id=session,
    )
    final = GatehouseHuman(gh, timeout=30).invoke(make_agent("batched", ran), inputs, config)
    gate = decider.finish()[0]
    assert gate["spec"] == {"kind": "approval", "action": "send_email, delete_file"}
    assert [(a["id"], a["name"], a["args"], a["allowed_actions"]) for a in gate["actions"]] == [
        ("action-1", "send_email", {"to": "all@example.com", "body": "outage"}, ["approve", "edit", "reject", "respond"]),
        ("action-2", "delete_file", {"path": "/srv/report.pdf"}, ["approve", "edit", "reject"]),
    ]
    assert gate["actions"][0]["description"].startswith("Tool execution requires approval")
    # The agent runs its tool calls concurrently: compare them in name order.
    assert sorted(ran, key=lambda r: r[0]) == [
        ("delete_file", {"path": "/srv/tmp/report.pdf"}), ("send_email", {"to": "all@example.com", "body": "outage"}),
    ]
    assert final["messages"][-1].content == "All done."


def test_the_reviewer_decides_the_actions_in_two_sittings_and_the_agent_waits_for_both(
    gh: Client, reviewer: Reviewer
) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    inputs, config, session = start()
    results: dict[str, Any] = {}

    def agent() -> None:
        results["final"] = GatehouseHuman(gh, timeout=30).invoke(make_agent("batched", ran), inputs, config)

    t = threading.Thread(target=agent)
    t.start()
    run = reviewer.run_of_session(session)
    gate = reviewer.next_gate(run)
    first = reviewer.resolve(gate["id"], "respond", actions=[
        {"id": "action-1", "action": "respond", "text": "I emailed them myself"},
    ])
    assert first["status"] == "pending", "one of two actions decided: the gate waits for the other"
    time.sleep(0.3)
    assert t.is_alive() and ran == [], "nothing ran on half a decision"
    reviewer.resolve(gate["id"], "reject", actions=[{"id": "action-2", "action": "reject", "text": "keep the report"}])
    t.join(30)
    assert ran == []
    results_by_call = tool_results(results["final"])
    assert results_by_call["call_1"] == "I emailed them myself"
    assert "keep the report" in results_by_call["call_2"]
    decided = gh.gate(gate["id"]).decision
    assert decided is not None and [d["action"] for d in decided.actions] == ["respond", "reject"]


def test_a_decision_an_action_does_not_allow_is_refused_by_the_server(gh: Client, reviewer: Reviewer) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    inputs, config, session = start()
    results: dict[str, Any] = {}
    t = threading.Thread(target=lambda: results.setdefault(
        "final", GatehouseHuman(gh, timeout=30).invoke(make_agent("batched", ran), inputs, config)))
    t.start()
    gate = reviewer.next_gate(reviewer.run_of_session(session))
    refused = reviewer.http.post(f"/gates/{gate['id']}/resolve", json={
        "action": "edit", "actions": [{"id": "action-2", "action": "respond", "text": "no"}]})
    assert refused.status_code == 422 and "not allowed on action `action-2`" in refused.json()["message"]
    reviewer.resolve(gate["id"], "approve")  # a bare approve decides every action still open
    t.join(30)
    assert sorted(name for name, _ in ran) == ["delete_file", "send_email"]
    assert len(reviewer.gates(gate["run_id"], "all")) == 1, "the refusal asked nothing again"


def test_a_whole_gate_rejection_rejects_every_action(gh: Client, reviewer: Reviewer) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    inputs, config, session = start()
    reviewer.decide_in_background(lambda g: {"action": "reject", "text": "not today"}, session_id=session)
    final = GatehouseHuman(gh, timeout=30).invoke(make_agent("batched", ran), inputs, config)
    assert ran == []
    assert all("not today" in r for r in tool_results(final).values())


def test_per_call_interrupts_are_two_gates_at_once_each_resumed_by_its_id(gh: Client, reviewer: Reviewer) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    inputs, config, session = start()

    def decide(gate: dict[str, Any]) -> dict[str, Any]:
        if gate["spec"]["action"] == "send_email":
            return {"action": "edit", "payload": {"to": "team@example.com", "body": "outage"}}
        return {"action": "reject", "text": "keep it"}

    decider = reviewer.decide_in_background(decide, session_id=session, count=2)
    final = GatehouseHuman(gh, timeout=30).invoke(make_agent("per_call", ran), inputs, config)
    gates = {g["spec"]["action"]: g for g in decider.finish()}
    assert gates["send_email"]["allowed_actions"] == ["approve", "edit", "reject", "respond"]
    assert gates["delete_file"]["allowed_actions"] == ["approve", "edit", "reject"]
    assert ran == [("send_email", {"to": "team@example.com", "body": "outage"})]
    assert "keep it" in tool_results(final)["call_2"]
