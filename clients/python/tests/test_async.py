"""The asyncio client: the same calls, awaited; many waits on one loop."""

from __future__ import annotations

import asyncio

import pytest

from gatehouse import AsyncClient, Expired, NotFound, Rejected, Timeout
from support import Reviewer, Server


async def test_an_async_agent_asks_and_the_reviewers_edit_comes_back(server: Server, reviewer: Reviewer) -> None:
    async with server.aclient() as gh:
        run = await gh.start_run({"prompt": "ship"}, title="async approval")
        reviewer.decide_in_background(lambda g: {"action": "edit", "payload": {"env": "qa"}}, run_id=run)
        decision = await gh.request_approval(run, "deploy", context={"env": "prod"})
        assert decision.action == "edit" and decision.payload == {"env": "qa"}
        assert (await gh.run_status(run))["status"] == "active"
        reply = await gh.add_turn(run, "deployed to qa")
        assert reply["directive"]["action"] == "continue"
        assert (await gh.complete_run(run, {"env": "qa"}))["status"] == "completed"


async def test_many_gates_are_awaited_at_once_on_one_loop(server: Server, reviewer: Reviewer) -> None:
    async with server.aclient() as gh:
        run = await gh.start_run({}, title="fan out")
        gates = await asyncio.gather(*(gh.open_gate(run, "question", f"Question {i}?") for i in range(5)))
        waits = [asyncio.create_task(gh.wait_for_decision(g, timeout=20)) for g in gates]
        await asyncio.sleep(0.2)
        assert not any(w.done() for w in waits), "every wait is parked in a long poll"
        for i, g in reversed(list(enumerate(gates))):
            reviewer.resolve(g.id, "respond", text=f"answer {i}")
        answers = await asyncio.gather(*waits)
    assert [a.text for a in answers] == [f"answer {i}" for i in range(5)]
    assert [a.gate_id for a in answers] == [g.id for g in gates]


async def test_async_tools_plan_context_and_exceptions(server: Server, reviewer: Reviewer) -> None:
    async with server.aclient() as gh:
        run = await gh.start_run({}, title="async everything")
        feedback = await gh.request_feedback(run, "draft")
        assert feedback.pending and feedback.kind == "question"
        reviewer.decide_in_background(
            lambda g: {"action": "respond", "text": "call Bob"} if "Escalated" in g["text"] else None, run_id=run
        )
        escalation = await gh.escalate_to_human(run, "who owns this?", block=False)
        with pytest.raises(Timeout):
            await gh.wait(feedback, timeout=0.3)
        assert (await gh.wait_for_decision(escalation, timeout=10)).text == "call Bob"
        assert (await gh.gate(feedback.id)).pending
        await gh.change_plan(run, "add_task", task_id="t1", description="Do it")
        assert (await gh.plan(run))["plan"]["plan"]["tasks"][0]["task_id"] == "t1"
        await gh.set_context(run, "k", 1)
        assert await gh.context(run) == {"k": 1}
        assert (await gh.delete_context(run, "k"))["old"] == 1
        assert len(await gh.context_history(run)) == 2
        with pytest.raises(NotFound):
            await gh.gate("gate_nope")
        gate = await gh.open_gate(run, "approval", "Deploy?", spec={"action": "deploy"})
        reviewer.resolve(gate.id, "reject", text="no")
        with pytest.raises(Rejected):
            await gh.wait_for_decision(gate)
        quick = await gh.open_gate(run, "question", "Now?", expires_in=1)
        with pytest.raises(Expired):
            await gh.wait_for_decision(quick, timeout=20)


async def test_async_events_follow_the_run(server: Server, reviewer: Reviewer) -> None:
    async with server.aclient() as gh:
        run = await gh.start_run({}, title="async events")
        gate = await gh.open_gate(run, "question", "Which region?")
        reviewer.resolve(gate.id, "respond", text="eu")
        types = []
        async for event in gh.events(run):
            types.append(event.type)
            if event.type == "gate_resolved":
                break
        assert types == ["run_created", "run_status_changed", "gate_opened", "run_status_changed", "gate_resolved"]
        page = await gh.run_events(run)
        assert [e["type"] for e in page["events"]][:5] == types
        assert (await gh.directive(run, wait=0))["action"] == "continue"
        listed = await gh.list_gates(run_id=run, status="all")
        assert listed["total"] == 1
        assert (await gh.active_runs(session_id=None))  # at least this run
        assert (await gh.run_state(run))["gates"][0]["id"] == gate.id
        assert (await gh.fail_run(run, "done testing"))["status"] == "failed"


async def test_an_async_reviewer_client_resolves_and_scores(server: Server) -> None:
    async with server.aclient() as agent, AsyncClient(server.url, token=server.reviewer) as rev:
        run = await agent.start_run({}, title="async reviewer")
        gate = await agent.open_gate(run, "quality_score", "Score it", spec={"required_score": 3})
        scored = await rev.score_gate(gate.id, 4.5)
        assert scored["verdict"] == "passes"
        other = await agent.open_gate(run, "question", "Which?")
        resolved = await rev.resolve_gate(other.id, "respond", text="this one")
        assert resolved.decision is not None and resolved.decision.decided_by == "py-reviewer"
