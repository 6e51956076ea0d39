"""The blocking client against a real server: every call, every gate kind,
and each exception."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from gatehouse import (
    AuthError,
    Cancelled,
    Client,
    Conflict,
    Expired,
    GatehouseError,
    InvalidRequest,
    NotFound,
    Rejected,
    Timeout,
)
from support import FAST, Reviewer, Server


@pytest.fixture
def gh(server: Server) -> Client:
    with server.client() as client:
        yield client  # type: ignore[misc]


def test_a_run_is_started_found_by_its_session_and_reports_its_status(gh: Client) -> None:
    run = gh.start_run({"prompt": "deploy"}, title="status check", session_id="sess-status")
    assert run.startswith("run_")
    status = gh.run_status(run)
    assert status["status"] == "created" and status["pending_actions"] == []
    assert [r["id"] for r in gh.active_runs(session_id="sess-status")] == [run]
    state = gh.run_state(run)
    assert state["run"]["input"] == {"prompt": "deploy"} and state["run"]["title"] == "status check"


def test_a_run_created_without_starting_is_begun_and_a_cancelled_one_retried(gh: Client, server: Server) -> None:
    run = gh.start_run({"prompt": "rotate keys"}, start=False, expires_in_secs=3600)
    assert gh.run_status(run)["status"] == "created"
    assert gh.run_state(run)["run"]["expires_at"], "the expiry is kept"
    assert gh.begin_run(run)["status"] == "active"
    with pytest.raises(Conflict):
        gh.begin_run(run)
    with pytest.raises(InvalidRequest) as bad:
        gh.start_run({}, expires_in_secs=0)
    assert bad.value.field == "expires_in_secs"

    gh.fail_run(run, "the vault was locked")
    with pytest.raises(AuthError):
        gh.retry_run(run)  # an agent token may not retry
    with server.client(token=server.reviewer) as person:
        retried = person.retry_run(run)
    assert (retried["status"], retried["retries"]) == ("active", 1)


def test_turns_answer_with_directives_held_while_the_run_steps(gh: Client, reviewer: Reviewer) -> None:
    free = gh.start_run({}, title="turns")
    reply = gh.add_turn(free, "looked at the logs", metadata={"tool": "grep"})
    assert reply["turn"]["content"] == "looked at the logs"
    assert reply["directive"]["action"] == "continue"
    stepped = gh.start_run({}, title="stepped", step_mode="step")
    held = gh.add_turn(stepped, "first step", wait=0.2)
    assert held["directive"]["action"] == "paused", "step mode pauses after every agent turn"
    with pytest.raises(Conflict) as caught:
        gh.add_turn(stepped, "slipping a second turn past the pause")
    assert "paused" in caught.value.message
    # The reviewer instructs and steps; the held directive call gets both.
    assert reviewer.http.post(f"/runs/{stepped}/instructions", json={"text": "use staging"}).status_code == 201

    def step_soon() -> None:
        time.sleep(0.3)
        reviewer.http.post(f"/runs/{stepped}/step")

    threading.Thread(target=step_soon).start()
    directive = gh.directive(stepped, wait=10)
    assert directive["action"] == "continue"
    assert [i["text"] for i in directive["instructions"]] == ["use staging"]


GATES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("approval", {"spec": {"action": "deploy"}, "payload": {"env": "prod"}}, {"action": "edit", "payload": {"env": "qa"}}),
    ("payload_review", {"payload": {"prompt": "a cat"}, "spec": {"required_fields": ["prompt"]}}, {"action": "approve"}),
    ("question", {}, {"action": "respond", "text": "eu-west-1"}),
    ("information_review", {"spec": {"confidence": 0.4, "reasons": ["thin sources"]}}, {"action": "approve"}),
    ("response_review", {"spec": {"raw": "raw out", "audited": "clean out"}}, {"action": "retry", "text": "shorter"}),
    ("quality_score", {"spec": {"deliverable_id": "pr-1", "rubric": ["tests"]}}, {"action": "needs_revision", "text": "add tests"}),
    ("goal_review", {"spec": {"goal": {"summary": "ship"}, "round": 2}}, {"action": "approve"}),
    (
        "plan_review",
        {"payload": {"tasks": [{"task_id": "a", "description": "A"}, {"task_id": "b", "description": "B"}]}},
        {"action": "edit", "payload": {"tasks": [{"task_id": "a", "description": "A only"}]}},
    ),
]


@pytest.mark.parametrize(("kind", "options", "decision"), GATES, ids=[g[0] for g in GATES])
def test_a_gate_of_every_kind_opens_and_its_decision_reaches_the_agent(
    gh: Client, reviewer: Reviewer, kind: str, options: dict[str, Any], decision: dict[str, Any]
) -> None:
    run = gh.start_run({}, title=f"{kind} gate")
    gate = gh.open_gate(run, kind, f"Please review this {kind}", priority="high", **options)  # type: ignore[arg-type]
    assert gate.kind == kind and gate.pending and gate.priority == "high"
    assert gate.idempotency_key, "every gate the client opens carries a key"
    reviewer.decide_in_background(lambda g: decision, run_id=run).finish()
    got = gh.wait_for_decision(gate, timeout=20)
    assert got.action == decision["action"]
    assert got.decided_by == "py-reviewer"
    if "payload" in decision:
        assert got.payload == decision["payload"]
    if "text" in decision:
        assert got.text == decision["text"]
    assert gh.gate(gate.id).status == "resolved"
    if kind == "plan_review":
        plan = gh.plan(run)["plan"]["plan"]
        assert [t["description"] for t in plan["tasks"]] == ["A only"], "an edited plan becomes the run's plan"


def test_an_agents_state_and_a_form_answer_come_back_with_the_decision(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="stateless")
    schema = {"type": "object", "properties": {"region": {"enum": ["eu", "us"]}}, "required": ["region"]}
    state = {"cursor": 7, "todo": ["migrate", "deploy"]}
    gate = gh.open_gate(run, "question", "Which region?", response_schema=schema, agent_state=state)
    assert gate.agent_state == state
    reviewer.decide_in_background(lambda g: {"action": "respond", "response": {"region": "us"}}, run_id=run).finish()
    done = gh.wait(gate.id, timeout=20)
    assert done.agent_state == state, "a stateless agent picks up where it stopped"
    assert done.decision is not None and done.decision.response == {"region": "us"}


def test_request_approval_returns_the_edit_and_the_final_payload(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="approval")
    reviewer.decide_in_background(lambda g: {"action": "edit", "payload": {"build": 42, "env": "staging"}}, run_id=run)
    decision = gh.request_approval(run, "deploy build 42", context={"build": 42, "env": "prod"}, urgency="urgent")
    assert decision.action == "edit" and decision.payload == {"build": 42, "env": "staging"}
    gate = gh.gate(decision.gate_id)
    assert gate.kind == "approval" and gate.priority == "urgent"
    assert gate.payload == {"build": 42, "env": "prod"}, "the proposal is kept beside the edit"
    assert gate.final_payload() == {"build": 42, "env": "staging"}


def test_a_rejected_approval_raises_rejected_with_the_reason(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="rejection")
    reviewer.decide_in_background(lambda g: {"action": "reject", "text": "not on a Friday"}, run_id=run)
    with pytest.raises(Rejected) as caught:
        gh.request_approval(run, "deploy", context={"env": "prod"})
    assert caught.value.reason == "not on a Friday"
    assert caught.value.gate.status == "resolved" and caught.value.decision.decided_by == "py-reviewer"
    assert "not on a Friday" in str(caught.value)


def test_escalate_to_human_gets_the_answer_in_words(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="escalation")
    reviewer.decide_in_background(lambda g: {"action": "respond", "text": "restart the replica"}, run_id=run)
    decision = gh.escalate_to_human(run, "Migrations fail on the replica", required_expertise=["postgres"])
    assert decision.action == "respond" and decision.text == "restart the replica"
    gate = gh.gate(decision.gate_id)
    assert gate.kind == "question" and gate.payload["required_expertise"] == ["postgres"]


def test_request_feedback_returns_at_once_and_the_answer_is_collected_later(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="feedback")
    gate = gh.request_feedback(run, "## Draft\n\nfaster sync", ["Is the tone right?"])
    assert gate.pending and gate.mode == "async"
    assert gh.run_status(run)["status"] != "awaiting_human", "feedback does not block the run"
    reviewer.resolve(gate.id, "respond", text="friendlier, please")
    assert gh.wait_for_decision(gate.id, timeout=10).text == "friendlier, please"


def test_waiting_past_the_callers_timeout_raises_timeout_and_leaves_the_gate_open(gh: Client) -> None:
    run = gh.start_run({}, title="timeout")
    gate = gh.open_gate(run, "question", "Anyone there?")
    started = time.monotonic()
    with pytest.raises(Timeout) as caught:
        gh.wait(gate, timeout=0.5)
    assert 0.4 < time.monotonic() - started < 5
    assert caught.value.gate_id == gate.id
    assert isinstance(caught.value, TimeoutError)
    assert gh.gate(gate.id).pending


def test_a_gate_nobody_answers_in_time_raises_expired(gh: Client) -> None:
    run = gh.start_run({}, title="expiry")
    gate = gh.open_gate(run, "question", "Quick, which region?", expires_in=1)
    with pytest.raises(Expired) as caught:
        gh.wait_for_decision(gate, timeout=20)
    assert caught.value.gate.status == "expired"


def test_a_gate_withdrawn_with_its_run_raises_cancelled(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="cancel")
    gate = gh.open_gate(run, "approval", "Deploy?", spec={"action": "deploy"})
    assert reviewer.http.delete(f"/run/{run}", params={"reason": "wrong ticket"}).status_code == 200
    with pytest.raises(Cancelled) as caught:
        gh.wait_for_decision(gate, timeout=10)
    assert caught.value.gate.status == "cancelled"


def test_a_second_resolution_is_a_conflict_naming_the_first_reviewer(server: Server, gh: Client) -> None:
    run = gh.start_run({}, title="conflict")
    gate = gh.open_gate(run, "approval", "Deploy?", spec={"action": "deploy"})
    with server.client(server.reviewer) as rev:
        decided = rev.resolve_gate(gate.id, "approve")
        assert decided.status == "resolved" and decided.decision is not None
        with pytest.raises(Conflict) as caught:
            rev.resolve_gate(gate.id, "reject", text="too late")
    assert caught.value.status == 409 and caught.value.code == "conflict"
    assert caught.value.resolved_by == "py-reviewer" and caught.value.resolved_at
    assert "already resolved by py-reviewer" in caught.value.message


def test_auth_errors_carry_the_servers_message(server: Server, gh: Client) -> None:
    with server.client("not-a-token") as bad, pytest.raises(AuthError) as caught:
        bad.start_run({})
    assert caught.value.status == 401 and caught.value.code == "unauthorized"
    run = gh.start_run({}, title="auth")
    with server.client(server.other_agent) as intruder, pytest.raises(AuthError) as caught:
        intruder.open_gate(run, "question", "May I?")
    assert caught.value.status == 403
    gate = gh.open_gate(run, "question", "Self-approve?")
    with pytest.raises(AuthError) as caught:
        gh.resolve_gate(gate.id, "respond", text="yes")
    assert "agent must not approve itself" in caught.value.message


def test_not_found_and_invalid_requests_name_what_is_wrong(gh: Client) -> None:
    with pytest.raises(NotFound) as missing:
        gh.gate("gate_does_not_exist")
    assert "gate_does_not_exist" in missing.value.message
    run = gh.start_run({}, title="invalid")
    with pytest.raises(InvalidRequest) as invalid:
        gh.open_gate(run, "question", "   ")
    assert invalid.value.status == 422 and invalid.value.message.startswith("text")
    assert invalid.value.field == "text"
    with pytest.raises(GatehouseError):  # every exception shares the base class
        gh.fail_run(run, "  ")


def test_the_plan_takes_all_six_operations(gh: Client) -> None:
    run = gh.start_run({}, title="plan")
    assert gh.plan(run)["plan"] is None
    gh.change_plan(run, "add_task", task_id="build", description="Build the image")
    gh.change_plan(run, "add_task", task_id="ship", description="Ship it")
    gh.change_plan(run, "set_dependencies", task_id="ship", dependencies=["build"])
    gh.change_plan(run, "assign_task", task_id="ship", agent_name="py-agent")
    gh.change_plan(run, "estimate_duration", task_id="build", duration="30m")
    revision = gh.change_plan(run, "update_task", task_id="build", status="completed")
    tasks = {t["task_id"]: t for t in revision["plan"]["tasks"]}
    assert tasks["ship"]["dependencies"] == ["build"] and tasks["ship"]["assigned_agent"] == "py-agent"
    assert tasks["build"]["status"] == "completed" and tasks["build"]["estimated_duration"] == "30m"
    replaced = gh.change_plan(run, "replace", plan={"tasks": [{"task_id": "only", "description": "One task"}]})
    assert [t["task_id"] for t in replaced["plan"]["tasks"]] == ["only"]
    view = gh.plan(run)
    assert len(view["revisions"]) == 7
    with pytest.raises(InvalidRequest) as cycle:
        gh.change_plan(run, "set_dependencies", task_id="only", dependencies=["only"])
    assert "only" in cycle.value.message


def test_the_shared_context_is_set_read_deleted_and_its_history_kept(gh: Client) -> None:
    run = gh.start_run({}, title="context")
    assert gh.set_context(run, "region", "eu-west-1") == {"key": "region", "old": None, "new": "eu-west-1"}
    assert gh.set_context(run, "region", "us-east-1")["old"] == "eu-west-1"
    gh.set_context(run, "a key/with slash", {"n": 1})
    assert gh.context(run) == {"region": "us-east-1", "a key/with slash": {"n": 1}}
    assert gh.delete_context(run, "region")["old"] == "us-east-1"
    with pytest.raises(NotFound):
        gh.delete_context(run, "region")
    history = gh.context_history(run)
    assert [h["key"] for h in history] == ["region", "region", "a key/with slash", "region"]


def test_a_run_completes_or_fails_and_its_timeline_pages(gh: Client) -> None:
    done = gh.start_run({}, title="complete")
    gh.add_turn(done, "all good")
    assert gh.complete_run(done, {"ok": True})["status"] == "completed"
    with pytest.raises(Conflict):
        gh.complete_run(done)
    failed = gh.start_run({}, title="fail")
    gh.open_gate(failed, "question", "Still needed?")
    assert gh.fail_run(failed, "out of budget")["status"] == "failed"
    assert gh.list_gates(run_id=failed, status="cancelled")["total"] == 1
    page = gh.run_events(done, limit=2)
    assert [e["type"] for e in page["events"]] == ["run_created", "run_status_changed"]
    rest = gh.run_events(done, after=page["next_after"])
    assert rest["events"][-1]["type"] == "run_status_changed" and rest["events"][-1]["to"] == "completed"


def test_a_reviewer_scores_a_quality_gate(server: Server, gh: Client) -> None:
    run = gh.start_run({}, title="score")
    gate = gh.open_gate(run, "quality_score", "Score PR 1", spec={"deliverable_id": "pr-1", "required_score": 4})
    with server.client(server.reviewer) as rev:
        scored = rev.score_gate(gate.id, 3, rubric_scores={"tests": 2}, justification="thin tests")
    assert scored["verdict"] == "needs_revision"
    assert gh.wait_for_decision(gate, timeout=5).action == "needs_revision"


def test_events_stream_in_order_and_resume_after_a_sequence_number(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="events")
    gate = gh.open_gate(run, "question", "Which region?")
    reviewer.resolve(gate.id, "respond", text="eu")
    seen = []
    for event in gh.events(run):
        seen.append(event)
        if event.type == "gate_resolved":
            break
    assert [e.type for e in seen] == [
        "run_created", "run_status_changed", "gate_opened", "run_status_changed", "gate_resolved",
    ]
    assert all(b.id > a.id for a, b in zip(seen, seen[1:]))
    assert seen[-1].data["decision"]["text"] == "eu"
    resumed = next(iter(gh.events(run, after=seen[2].id)))
    assert resumed.id == seen[3].id, "resuming after an id starts at the next event"


def test_an_approval_gate_may_propose_several_actions_each_decided_on_its_own(server: Server, gh: Client) -> None:
    run = gh.start_run({}, title="batch")
    gate = gh.open_gate(run, "approval", "Two tool calls", spec={"action": "tools"}, actions=[
        {"id": "c1", "name": "send_email", "args": {"to": "a@example.com"}},
        {"id": "c2", "name": "delete_file", "args": {"path": "/tmp/x"}, "allowed_actions": ["approve", "reject"]},
    ])
    assert [a["id"] for a in gate.actions] == ["c1", "c2"]
    with server.client(server.reviewer) as rev:
        half = rev.resolve_gate(gate.id, "edit", actions=[{"id": "c2", "action": "reject", "text": "keep it"}])
        assert half.pending and half.actions[1]["decision"]["action"] == "reject"
        rev.resolve_gate(gate.id, "edit", actions=[{"id": "c1", "action": "edit", "args": {"to": "b@example.com"}}])
    decision = gh.wait_for_decision(gate, timeout=10)
    assert decision.action == "edit"
    assert [(d["id"], d["action"], d.get("args"), d.get("text")) for d in decision.actions] == [
        ("c1", "edit", {"to": "b@example.com"}, None), ("c2", "reject", None, "keep it"),
    ]


def test_a_base_url_that_misses_the_api_says_which_url_and_what_to_check(server: Server) -> None:
    from gatehouse import GatehouseError

    with Client(server.url + "/ui", token=server.agent, retry=FAST) as wrong:
        with pytest.raises(GatehouseError) as caught:
            wrong.start_run({}, title="lost")
    message = str(caught.value)
    assert f"{server.url}/ui/api/hitl/run" in message and "Is the base URL right?" in message, message
    assert caught.value.status in (404, 405)
