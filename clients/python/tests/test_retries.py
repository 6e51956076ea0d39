"""Retries: a lost answer or a transient failure never opens a second gate,
unkeyed writes are not repeated once the server may have acted, and the
event stream resumes where it broke."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from gatehouse import AsyncClient, Client, ConnectionFailed, Retry, ServerError
from proxy import Fault, FlakyProxy
from support import FAST, Reviewer, Server


@pytest.fixture
def proxy(server: Server) -> Iterator[FlakyProxy]:
    p = FlakyProxy(server.url)
    try:
        yield p
    finally:
        p.close()


@pytest.fixture
def flaky(server: Server, proxy: FlakyProxy) -> Iterator[Client]:
    with Client(proxy.url, token=server.agent, retry=FAST) as client:
        yield client


def test_a_lost_answer_to_opening_a_gate_is_retried_under_the_same_key_and_opens_one_gate(
    flaky: Client, proxy: FlakyProxy, reviewer: Reviewer
) -> None:
    run = flaky.start_run({}, title="lost answer")
    proxy.faults.append(Fault("POST", r"/runs/[^/]+/gates$", "drop"))
    gate = flaky.open_gate(run, "approval", "Deploy?", spec={"action": "deploy"}, payload={"env": "prod"})
    sent = proxy.requests("POST", r"/gates$")
    assert len(sent) == 2 and all(s.forwarded for s in sent), "the first answer was lost after the server acted"
    assert sent[0].headers["Idempotency-Key"] == sent[1].headers["Idempotency-Key"]
    assert [g["id"] for g in reviewer.gates(run, "all")] == [gate.id]


@pytest.mark.parametrize("tool", ["request_approval", "escalate_to_human", "request_feedback"])
@pytest.mark.parametrize("fault", ["drop", "502"])
def test_a_retried_tool_call_never_opens_a_second_gate(
    flaky: Client, proxy: FlakyProxy, reviewer: Reviewer, tool: str, fault: str
) -> None:
    run = flaky.start_run({}, title=f"{tool} {fault}")
    proxy.faults.append(Fault("POST", f"/tools/{tool}$", fault))
    if tool == "request_approval":
        gate = flaky.request_approval(run, "deploy", context={"env": "prod"}, block=False)
    elif tool == "escalate_to_human":
        gate = flaky.escalate_to_human(run, "stuck on migrations", block=False)
    else:
        gate = flaky.request_feedback(run, "draft", ["ok?"])
    assert len(proxy.requests("POST", f"/tools/{tool}$")) == 2
    assert [g["id"] for g in reviewer.gates(run, "all")] == [gate.id]


def test_the_same_key_twice_returns_the_first_gate_and_a_new_key_opens_another(flaky: Client, reviewer: Reviewer) -> None:
    run = flaky.start_run({}, title="keys")
    first = flaky.open_gate(run, "question", "Which region?", idempotency_key="ask-region")
    again = flaky.open_gate(run, "question", "Which region, again?", idempotency_key="ask-region")
    assert again.id == first.id and again.text == "Which region?"
    by_tool = flaky.request_approval(run, "deploy", block=False, idempotency_key="approve-deploy")
    assert flaky.request_approval(run, "deploy", block=False, idempotency_key="approve-deploy").id == by_tool.id
    other = flaky.open_gate(run, "question", "Which zone?", idempotency_key="ask-zone")
    assert other.id != first.id
    assert len(reviewer.gates(run, "all")) == 3


def test_starting_a_run_is_retried_only_when_the_server_cannot_have_acted(
    flaky: Client, proxy: FlakyProxy, reviewer: Reviewer
) -> None:
    proxy.faults.append(Fault("POST", r"/run$", "503"))
    run = flaky.start_run({}, session_id="retry-503")
    assert [s.forwarded for s in proxy.requests("POST", r"/run$")] == [False, True]
    assert [r["id"] for r in reviewer.http.get("/runs/active", params={"session_id": "retry-503"}).json()["runs"]] == [run]
    proxy.faults.append(Fault("POST", r"/run$", "drop"))
    with pytest.raises(ConnectionFailed):
        flaky.start_run({}, session_id="retry-drop")
    assert len(proxy.requests("POST", r"/run$")) == 3, "a write without a key is not repeated after it reached the server"


def test_429_is_retried_after_retry_after(flaky: Client, proxy: FlakyProxy) -> None:
    proxy.faults.append(Fault("GET", r"/status$", "429", times=2))
    run = flaky.start_run({}, title="429")
    assert flaky.run_status(run)["run_id"] == run
    assert [s.forwarded for s in proxy.requests("GET", r"/status$")] == [False, False, True]


def test_retries_stop_after_the_policys_attempts_with_the_last_error(flaky: Client, proxy: FlakyProxy) -> None:
    run = flaky.start_run({}, title="give up")
    proxy.faults.append(Fault("GET", r"/status$", "503", times=100))
    with pytest.raises(ServerError) as caught:
        flaky.run_status(run)
    assert caught.value.status == 503 and "after 4 tries" in str(caught.value)
    assert len(proxy.requests("GET", r"/status$")) == FAST.attempts


def test_an_unreachable_server_is_a_connection_failure_after_backing_off() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    retry = Retry(attempts=3, backoff=0.1, max_backoff=0.2)
    started = time.monotonic()
    with Client(f"http://127.0.0.1:{port}", token="t", retry=retry) as gh, pytest.raises(ConnectionFailed) as caught:
        gh.open_gate("run_x", "question", "Anyone?")
    assert "after 3 tries" in str(caught.value)
    assert time.monotonic() - started >= 0.1, "it backed off between tries"


def test_the_event_stream_resumes_with_last_event_id_after_each_cut(
    server: Server, proxy: FlakyProxy, reviewer: Reviewer
) -> None:
    proxy.cut_events_after = 2
    with Client(proxy.url, token=server.agent, retry=FAST) as gh:
        run = gh.start_run({}, title="cut streams")
        for i in range(3):
            reviewer.resolve(gh.open_gate(run, "question", f"Q{i}?").id, "respond", text=f"A{i}")
        events = []
        for event in gh.events(run):
            events.append(event)
            if len(events) == 9:
                break
    ids = [e.id for e in events]
    assert ids == sorted(set(ids)), "nothing repeated, in order"
    assert ids == [e["seq"] for e in gh_log(reviewer, run)][:9], "nothing missed"
    resumed_from = [s.headers.get("Last-Event-ID") for s in proxy.requests("GET", "/events")]
    assert resumed_from[0] is None and resumed_from[1:4] == [str(ids[1]), str(ids[3]), str(ids[5])]


def gh_log(reviewer: Reviewer, run: str) -> list[dict[str, object]]:
    return list(reviewer.http.get(f"/runs/{run}/events").json()["events"])


async def test_the_async_client_retries_a_lost_answer_without_a_second_gate(
    server: Server, proxy: FlakyProxy, reviewer: Reviewer
) -> None:
    async with server.aclient(retry=FAST) as direct:
        run = await direct.start_run({}, title="async lost answer")
    proxy.faults.append(Fault("POST", r"/gates$", "drop"))
    async with AsyncClient(proxy.url, token=server.agent, retry=FAST) as gh:
        gate = await gh.open_gate(run, "question", "Which region?")
    assert len(proxy.requests("POST", r"/gates$")) == 2
    assert [g["id"] for g in reviewer.gates(run, "all")] == [gate.id]
