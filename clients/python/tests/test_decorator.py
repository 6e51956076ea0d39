"""@requires_approval: the arguments are the payload, an edit changes them,
a rejection raises and the function never runs."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from gatehouse import Client, GatehouseError, Rejected, requires_approval
from support import Reviewer, Server


@pytest.fixture
def gh(server: Server) -> Client:
    with server.client() as client:
        yield client  # type: ignore[misc]


def test_an_approved_call_runs_with_its_own_arguments(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="decorator approve")
    calls: list[tuple[int, str]] = []

    @requires_approval(gh, run=run, urgency="high")
    def deploy(build: int, env: str = "staging") -> str:
        calls.append((build, env))
        return f"{build}@{env}"

    decider = reviewer.decide_in_background(lambda g: {"action": "approve"}, run_id=run)
    assert deploy(42, env="prod") == "42@prod"
    gate = decider.finish()[0]
    assert gate["payload"] == {"build": 42, "env": "prod"}, "the bound arguments are the payload"
    assert gate["spec"] == {"kind": "approval", "action": "test_an_approved_call_runs_with_its_own_arguments.<locals>.deploy"}
    assert gate["priority"] == "high"
    assert calls == [(42, "prod")]


def test_an_edit_changes_the_arguments_the_function_gets(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="decorator edit")
    calls: list[dict[str, Any]] = []

    @requires_approval(gh, run=run, action="send_email", text=lambda to, *_, **__: f"Email **{to}**?")
    def send_email(to: str, subject: str, *, cc: list[str] | None = None, **headers: str) -> None:
        calls.append({"to": to, "subject": subject, "cc": cc, "headers": headers})

    decider = reviewer.decide_in_background(
        lambda g: {"action": "edit", "payload": {**g["payload"], "to": "team@example.com", "cc": ["boss@example.com"],
                                                  "priority": "low"}},
        run_id=run,
    )
    send_email("all@example.com", "Outage", x_tag="ops")
    gate = decider.finish()[0]
    assert gate["text"] == "Email **all@example.com**?"
    assert gate["payload"] == {"to": "all@example.com", "subject": "Outage", "cc": None, "headers": {"x_tag": "ops"}}
    assert calls == [{
        "to": "team@example.com", "subject": "Outage", "cc": ["boss@example.com"],
        # A key that is no parameter lands in **headers; the reviewer's `headers` replaces the original.
        "headers": {"x_tag": "ops", "priority": "low"},
    }]


def test_a_rejection_raises_and_the_function_never_runs(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="decorator reject")
    calls: list[str] = []

    @requires_approval(gh, run=run)
    def drop_table(name: str) -> None:
        calls.append(name)

    reviewer.decide_in_background(lambda g: {"action": "reject", "text": "that is production"}, run_id=run)
    with pytest.raises(Rejected) as caught:
        drop_table("users")
    assert caught.value.reason == "that is production"
    assert calls == []


def test_an_edit_naming_no_parameter_raises_instead_of_dropping_it(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="decorator bad edit")
    calls: list[int] = []

    @requires_approval(gh, run=run)
    def scale(replicas: int) -> None:
        calls.append(replicas)

    reviewer.decide_in_background(lambda g: {"action": "edit", "payload": {"replicaz": 2}}, run_id=run)
    with pytest.raises(GatehouseError, match="replicaz"):
        scale(5)
    assert calls == []


def test_arguments_that_are_not_json_are_refused_before_asking(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="decorator not json")

    @requires_approval(gh, run=run)
    def upload(data: object) -> None:
        raise AssertionError("never called")

    with pytest.raises(TypeError, match="JSON"):
        upload(object())
    assert reviewer.gates(run, "all") == []


def test_a_stable_key_finds_the_first_calls_gate_instead_of_asking_again(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="decorator key")
    calls: list[int] = []

    @requires_approval(gh, run=run, idempotency_key=lambda build: f"deploy-{build}")
    def deploy(build: int) -> None:
        calls.append(build)

    reviewer.decide_in_background(lambda g: {"action": "approve"}, run_id=run)
    deploy(7)
    deploy(7)  # e.g. the same step after a restart: the gate is found, already approved
    assert calls == [7, 7]
    assert len(reviewer.gates(run, "all")) == 1


def test_methods_leave_self_out_of_the_payload_and_a_run_is_started_when_none_is_given(
    gh: Client, reviewer: Reviewer
) -> None:
    class Deployer:
        def __init__(self) -> None:
            self.done: list[str] = []

        @requires_approval(gh)
        def ship(self, env: str) -> None:
            self.done.append(env)

    def review() -> None:
        runs: list[dict[str, Any]] = []
        while not runs:
            listed = reviewer.http.get("/runs/active", params={"limit": 500}).json()["runs"]
            runs = [r for r in listed if r["title"].endswith("Deployer.ship")]
        gate = reviewer.next_gate(runs[0]["id"])
        seen.append(gate)
        reviewer.resolve(gate["id"], "edit", {"env": "qa"})

    seen: list[dict[str, Any]] = []
    t = threading.Thread(target=review)
    t.start()
    d = Deployer()
    d.ship("prod")
    t.join(10)
    assert seen[0]["payload"] == {"env": "prod"}, "self is not shown"
    assert d.done == ["qa"]


async def test_an_async_function_is_guarded_by_the_async_client(server: Server, reviewer: Reviewer) -> None:
    async with server.aclient() as agh:
        run = await agh.start_run({}, title="decorator async")
        calls: list[str] = []

        @requires_approval(agh, run=run)
        async def publish(post: str) -> str:
            calls.append(post)
            return post.upper()

        reviewer.decide_in_background(lambda g: {"action": "edit", "payload": {"post": "hello, world"}}, run_id=run)
        assert await publish("hello") == "HELLO, WORLD"
        assert calls == ["hello, world"]

        @requires_approval(agh, run=run)
        async def delete(post: str) -> None:
            calls.append("deleted " + post)

        reviewer.decide_in_background(lambda g: {"action": "reject"}, run_id=run)
        with pytest.raises(Rejected):
            await delete("hello")
        assert calls == ["hello, world"]


def test_a_sync_function_cannot_take_the_async_client(server: Server) -> None:
    with pytest.raises(TypeError, match="not async"):

        @requires_approval(server.aclient())
        def plain() -> None: ...
