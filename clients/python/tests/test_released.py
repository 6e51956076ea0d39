"""A reviewer resumes a run awaiting a human without deciding its gate: the
agent waiting on it is told it was released (its own outcome, never an
approval), and the gate stays open for a decision it can still wait for."""

from __future__ import annotations

import pytest

from gatehouse import Client, GateOutcome, Released
from support import FAST, Reviewer, Server


@pytest.fixture
def gh(server: Server) -> Client:
    with server.client(retry=FAST) as client:
        yield client  # type: ignore[misc]


def test_a_released_gate_raises_released_and_can_still_be_waited_on(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="release")
    gate = gh.open_gate(run, "approval", "Deploy?", spec={"action": "deploy"}, payload={"v": 1})
    assert gh.run_status(run)["status"] == "awaiting_human"
    resumed = reviewer.http.post(f"/run/{run}/resume", json={})
    assert resumed.status_code == 200 and resumed.json()["status"] == "active"

    with pytest.raises(Released) as caught:
        gh.wait_for_decision(gate, timeout=10)
    assert isinstance(caught.value, GateOutcome)
    assert caught.value.gate.pending and caught.value.gate.released["by"] == "py-reviewer"
    assert caught.value.gate.decision is None

    reviewer.resolve(gate.id, "approve")
    decided = gh.wait(gate, timeout=10, through_release=True)
    assert decided.status == "resolved" and decided.decision is not None
    assert decided.decision.decided_by == "py-reviewer"


async def test_the_async_client_raises_released_too(server: Server, reviewer: Reviewer) -> None:
    async with server.aclient() as agh:
        run = await agh.start_run({}, title="async release")
        gate = await agh.open_gate(run, "question", "Which region?")
        assert reviewer.http.post(f"/run/{run}/resume", json={}).status_code == 200
        with pytest.raises(Released) as caught:
            await agh.wait_for_decision(gate, timeout=10)
        assert caught.value.gate.pending and caught.value.gate.released is not None


def test_a_declared_gate_opens_at_its_node(gh: Client) -> None:
    node = {"workflow_node_id": "draft-review", "kind": "quality_score", "rubric": ["accuracy"], "required_score": 4}
    run = gh.start_run({}, title="declared", declared_gates=[node])
    gate = gh.reach_node(run, "draft-review", payload={"draft": "text"})
    assert gate.workflow_node_id == "draft-review" and gate.kind == "quality_score"
    assert gate.spec["required_score"] == 4 and gate.spec["rubric"] == ["accuracy"]
