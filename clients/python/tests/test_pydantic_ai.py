"""The Pydantic AI adapter with the real ``pydantic-ai-slim`` package and its
``FunctionModel`` (no network): tools with ``requires_approval=True`` defer
their calls, which are decided in Gatehouse and handed back as
``DeferredToolResults``."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from gatehouse.pydantic_ai import GatehouseApprovals
from support import Reviewer, Server


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Asks to deploy and to page on-call at once, then reports what the tools said."""
    returns = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
    if returns:
        said = sorted(f"{p.tool_name}: {p.content}" for p in returns)
        return ModelResponse(parts=[TextPart(" | ".join(said))])
    return ModelResponse(parts=[
        ToolCallPart("deploy", {"service": "api", "version": "1.2"}, tool_call_id="call-deploy"),
        ToolCallPart("page", {"team": "ops"}, tool_call_id="call-page"),
    ])


def make_agent(ran: list[tuple[str, dict[str, Any]]]) -> Agent[None, Any]:
    agent: Agent[None, Any] = Agent(FunctionModel(scripted), output_type=[str, DeferredToolRequests], name="ops")

    @agent.tool_plain(requires_approval=True)
    def deploy(service: str, version: str) -> str:
        """Deploy a service at a version."""
        ran.append(("deploy", {"service": service, "version": version}))
        return f"deployed {service}@{version}"

    @agent.tool_plain(requires_approval=True)
    def page(team: str) -> str:
        """Page a team."""
        ran.append(("page", {"team": team}))
        return f"paged {team}"

    return agent


def conversation() -> tuple[str, str]:
    c = f"pa-{uuid.uuid4().hex[:10]}"
    return c, f"pydantic-ai:{c}"


async def test_two_approvals_are_two_gates_one_edited_one_rejected(server: Server, reviewer: Reviewer) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    conv, session = conversation()

    def decide(gate: dict[str, Any]) -> dict[str, Any]:
        if gate["spec"]["action"] == "deploy":
            return {"action": "edit", "payload": {"service": "api", "version": "1.3"}}
        return {"action": "reject", "text": "it is 3 am, no paging"}

    decider = reviewer.decide_in_background(decide, session_id=session, count=2)
    async with server.aclient() as gh:
        result = await GatehouseApprovals(gh, timeout=30).run(make_agent(ran), "Ship api", conversation_id=conv)
    gates = {g["spec"]["action"]: g for g in decider.finish()}
    assert gates["deploy"]["payload"] == {"service": "api", "version": "1.2"}
    assert gates["deploy"]["payload_schema"]["required"] == ["service", "version"]
    assert gates["deploy"]["allowed_actions"] == ["approve", "edit", "reject"]
    assert ran == [("deploy", {"service": "api", "version": "1.3"})], "the edit ran; the rejected page did not"
    assert result.output == "deploy: deployed api@1.3 | page: it is 3 am, no paging"
    runs = reviewer.http.get("/runs", params={"limit": 500}).json()["runs"]
    assert [r["status"] for r in runs if r["session_id"] == session] == ["completed"]


async def test_gatehouse_refuses_an_edit_that_breaks_the_tools_schema(server: Server, reviewer: Reviewer) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []
    conv, session = conversation()
    refused: list[int] = []

    def decide(gate: dict[str, Any]) -> dict[str, Any]:
        if gate["spec"]["action"] == "deploy":
            bad = reviewer.http.post(f"/gates/{gate['id']}/resolve", json={"action": "edit", "payload": {"service": "web"}})
            refused.append(bad.status_code)
            assert "version" in bad.text, bad.text
        return {"action": "approve"}

    reviewer.decide_in_background(decide, session_id=session, count=2)
    async with server.aclient() as gh:
        await GatehouseApprovals(gh, timeout=30).run(make_agent(ran), "Ship api", conversation_id=conv)
    assert refused == [422]
    assert sorted(name for name, _ in ran) == ["deploy", "page"]


async def test_a_cancelled_run_raises_and_nothing_runs(server: Server, reviewer: Reviewer) -> None:
    import threading

    from gatehouse import Cancelled

    ran: list[tuple[str, dict[str, Any]]] = []
    conv, session = conversation()

    def cancel() -> None:
        run = reviewer.run_of_session(session)
        reviewer.next_gate(run)
        reviewer.http.delete(f"/run/{run}", params={"reason": "not now"}).raise_for_status()

    t = threading.Thread(target=cancel)
    t.start()
    async with server.aclient() as gh:
        with pytest.raises(Cancelled):
            await GatehouseApprovals(gh, timeout=30).run(make_agent(ran), "Ship api", conversation_id=conv)
    t.join(10)
    assert ran == []


async def test_a_run_cancelled_between_two_approvals_raises_cancelled_not_the_refused_second_gate(
    server: Server, reviewer: Reviewer
) -> None:
    """The reviewer ends the run after the first gate opens and before the second: the second open is
    refused, and the agent hears what became of the first (cancelled), as a wait on it would say."""
    from gatehouse import Cancelled

    ran: list[tuple[str, dict[str, Any]]] = []
    conv, _ = conversation()
    async with server.aclient() as gh:
        opens = gh.open_gate

        async def open_then_cancel(run_id: str, *args: Any, **kwargs: Any) -> Any:
            gate = await opens(run_id, *args, **kwargs)
            reviewer.http.delete(f"/run/{run_id}", params={"reason": "not now"}).raise_for_status()
            return gate

        gh.open_gate = open_then_cancel  # type: ignore[method-assign]
        with pytest.raises(Cancelled) as caught:
            await GatehouseApprovals(gh, timeout=30).run(make_agent(ran), "Ship api", conversation_id=conv)
    assert caught.value.gate.spec["action"] == "deploy"
    assert caught.value.gate.status == "cancelled"
    assert ran == []
