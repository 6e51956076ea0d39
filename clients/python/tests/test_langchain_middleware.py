"""langchain v1's HumanInTheLoopMiddleware through Gatehouse: a real agent
(``create_agent``) on langchain-core's fake chat model, which emits two
tool calls in one step, so no network is needed."""

from __future__ import annotations

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


def test_batched_actions_are_one_gate_decided_one_by_one_the_first_approved_the_second_edited(
    gh: Client, reviewer: Reviewer
) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    inputs, config, session = start()

    def decide(gate: dict[str, Any]) -> dict[str, Any]:
        actions = gate["payload"]["actions"]
        actions[1]["args"] = {"path": "/srv/tmp/report.pdf"}  # only the second is changed
        return {"action": "edit", "payload": {"actions": actions}}

    decider = reviewer.decide_in_background(decide, session_id=session)
    final = GatehouseHuman(gh, timeout=30).invoke(make_agent("batched", ran), inputs, config)
    gate = decider.finish()[0]
    assert gate["spec"] == {"kind": "approval", "action": "send_email, delete_file"}
    assert gate["allowed_actions"] == ["approve", "edit", "reject"], "respond is offered only if every action allows it"
    assert [a["allowed_decisions"] for a in gate["payload"]["actions"]] == [
        ["approve", "edit", "reject", "respond"], ["approve", "edit", "reject"],
    ]
    # The agent runs its tool calls concurrently: compare them in name order.
    assert sorted(ran, key=lambda r: r[0]) == [
        ("delete_file", {"path": "/srv/tmp/report.pdf"}), ("send_email", {"to": "all@example.com", "body": "outage"}),
    ]
    assert final["messages"][-1].content == "All done."


def test_per_action_decisions_in_the_payload_reject_one_and_respond_to_the_other(gh: Client, reviewer: Reviewer) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    inputs, config, session = start()

    def decide(gate: dict[str, Any]) -> dict[str, Any]:
        actions = gate["payload"]["actions"]
        actions[0]["decision"] = {"type": "respond", "message": "I emailed them myself"}
        actions[1]["decision"] = "reject"
        actions[1]["message"] = "keep the report"
        return {"action": "edit", "payload": {"actions": actions}}

    reviewer.decide_in_background(decide, session_id=session)
    final = GatehouseHuman(gh, timeout=30).invoke(make_agent("batched", ran), inputs, config)
    assert ran == []
    results = tool_results(final)
    assert results["call_1"] == "I emailed them myself"
    assert "keep the report" in results["call_2"]


def test_a_decision_an_action_does_not_allow_is_asked_again(gh: Client, reviewer: Reviewer) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    inputs, config, session = start()
    answers = iter([
        lambda actions: [{**actions[0]}, {**actions[1], "decision": {"type": "respond", "message": "no"}}],
        lambda actions: [{**a, "decision": None} for a in actions],  # the retry keeps the attempt: clear it
    ])

    def decide(gate: dict[str, Any]) -> dict[str, Any]:
        return {"action": "edit", "payload": {"actions": next(answers)(gate["payload"]["actions"])}}

    decider = reviewer.decide_in_background(decide, session_id=session, count=2)
    GatehouseHuman(gh, timeout=30).invoke(make_agent("batched", ran), inputs, config)
    second = decider.finish()[1]
    assert second["payload"]["actions"][1]["decision"] == {"type": "respond", "message": "no"}
    assert "action 2 (`delete_file`) allows approve, edit, reject, not `respond`" in second["text"]
    assert sorted(name for name, _ in ran) == ["delete_file", "send_email"]


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
