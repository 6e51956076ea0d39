"""The goal and plan collaboration loop through Gatehouse (examples/langgraph_goal_plan): the goal
refined over three rounds, the plan modified then approved (or rejected),
and execution with no further prompt."""

from __future__ import annotations

import sys
import uuid
from typing import Any

import pytest

from gatehouse import Client
from gatehouse.langgraph import GatehouseHuman
from support import REPO, Reviewer, Server

sys.path.insert(0, str(REPO / "examples" / "langgraph_goal_plan"))
from graph import build_graph  # noqa: E402


@pytest.fixture
def gh(server: Server) -> Client:
    with server.client() as client:
        yield client  # type: ignore[misc]


def script(*steps: Any) -> Any:
    """A reviewer deciding gates in order; each step is (expected kind, decision or function of the gate)."""
    queue = list(steps)

    def decide(gate: dict[str, Any]) -> dict[str, Any]:
        kind, decision = queue.pop(0)
        assert gate["spec"]["kind"] == kind, (gate["spec"], kind)
        return decision(gate) if callable(decision) else decision

    return decide


def test_the_goal_is_refined_three_times_the_plan_modified_then_approved_then_executed_without_prompts(
    gh: Client, reviewer: Reviewer
) -> None:
    thread = f"goal-{uuid.uuid4().hex[:8]}"

    def drop_verify(gate: dict[str, Any]) -> dict[str, Any]:
        tasks = [
            {**t, "dependencies": ["change" if d == "verify" else d for d in t.get("dependencies", [])]}
            for t in gate["payload"]["tasks"]
            if t["task_id"] != "verify"
        ]
        return {"action": "edit", "payload": {"tasks": tasks}, "text": "no separate verify step"}

    decider = reviewer.decide_in_background(
        script(
            ("goal_review", {"action": "needs_revision", "text": "only the /search endpoint"}),
            ("goal_review", {"action": "needs_revision", "text": "p99, not p50"}),
            ("goal_review", {"action": "needs_revision", "text": "by the end of the quarter"}),
            ("goal_review", {"action": "approve"}),
            ("plan_review", {"action": "needs_revision", "text": "add task: Roll back if p99 regresses"}),
            ("plan_review", drop_verify),
            ("plan_review", {"action": "approve"}),
        ),
        session_id=f"langgraph:{thread}",
        count=7,
    )
    final = GatehouseHuman(gh, timeout=30).invoke(
        build_graph(), {"raw_goal": "Halve search latency"}, {"configurable": {"thread_id": thread}}
    )
    gates = decider.finish()
    assert final["goal_iteration"] == 4, "three refinements, then accepted"
    assert final["goal_spec"] == "Halve search latency; only the /search endpoint; p99, not p50; by the end of the quarter"
    assert [g["spec"].get("round") for g in gates[:4]] == [1, 2, 3, 4]
    assert final["plan_change_log"] == ["added task_004: Roll back if p99 regresses", "replaced by the reviewer's edit"]
    assert [t["task_id"] for t in gates[5]["payload"]["tasks"]] == ["analyse", "change", "verify", "task_004"]
    assert final["executed"] == ["analyse", "change", "task_004"], "the modified plan ran"
    assert final["phase"] == "done"
    run = gates[0]["run_id"]
    all_gates = reviewer.gates(run, "all")
    assert len(all_gates) == 7, "execution asked nothing more"
    plan = reviewer.http.get(f"/runs/{run}/plan").json()["plan"]["plan"]
    assert [t["task_id"] for t in plan["tasks"]] == ["analyse", "change", "task_004"], "the edit became the run's plan"
    status = reviewer.http.get(f"/run/{run}/status").json()["status"]
    assert status == "completed"


def test_a_rejected_plan_ends_the_graph_cleanly_without_executing(gh: Client, reviewer: Reviewer) -> None:
    thread = f"goal-{uuid.uuid4().hex[:8]}"
    reviewer.decide_in_background(
        script(
            ("goal_review", {"action": "approve"}),
            ("plan_review", {"action": "reject", "text": "not this quarter"}),
        ),
        session_id=f"langgraph:{thread}",
        count=2,
    )
    final = GatehouseHuman(gh, timeout=30).invoke(
        build_graph(), {"raw_goal": "Rewrite the billing service"}, {"configurable": {"thread_id": thread}}
    )
    assert final["phase"] == "rejected"
    assert final["user_plan_feedback"] == "not this quarter"
    assert "executed" not in final
