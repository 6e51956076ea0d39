"""Opening a gate and waiting for its decision in one request
(``open_gate(..., wait=SECONDS)``, ``POST /runs/{id}/gates?wait=``), in the
clients and in the LangGraph adapter, whose checkpoint with one interrupt is
then a single request; a gate still pending after the hold is long-polled."""

from __future__ import annotations

import operator
import uuid
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from gatehouse import Client, Timeout, InvalidRequest
from gatehouse.langgraph import GatehouseHuman
from proxy import FlakyProxy
from support import FAST, Reviewer, Server


class State(TypedDict, total=False):
    answers: Annotated[list[Any], operator.add]


def asking(*questions: str) -> Any:
    """A graph whose one node asks every question at once (parallel interrupts need separate nodes)."""
    g = StateGraph(State)
    for i, q in enumerate(questions):

        def ask(state: State, q: str = q) -> State:
            return {"answers": [interrupt(q)]}

        g.add_node(f"ask{i}", ask)
        g.add_edge(START, f"ask{i}")
        g.add_edge(f"ask{i}", END)
    return g.compile(checkpointer=InMemorySaver())


@pytest.fixture
def proxy(server: Server) -> Iterator[FlakyProxy]:
    p = FlakyProxy(server.url)
    try:
        yield p
    finally:
        p.close()


@pytest.fixture
def watched(server: Server, proxy: FlakyProxy) -> Iterator[Client]:
    """The agent's client, every request seen by the proxy."""
    with Client(proxy.url, token=server.agent, retry=FAST) as client:
        yield client


def test_a_gate_decided_during_the_wait_comes_back_decided(server: Server, reviewer: Reviewer) -> None:
    with server.client() as gh:
        run = gh.start_run({}, title="open and wait")
        reviewer.decide_in_background(lambda g: {"action": "approve"}, run_id=run)
        gate = gh.open_gate(run, "approval", "Deploy?", spec={"action": "deploy"}, wait=30)
    assert gate.status == "resolved" and gate.decision is not None
    assert gate.decision.action == "approve"


def test_a_wait_that_passes_first_returns_the_pending_gate(server: Server) -> None:
    with server.client() as gh:
        run = gh.start_run({}, title="open and wait, nobody there")
        gate = gh.open_gate(run, "question", "Anyone?", wait=0.2)
        assert gate.pending
        assert gh.gate(gate.id).pending


def test_a_wait_past_sixty_seconds_is_refused_naming_wait(server: Server) -> None:
    with server.client() as gh:
        run = gh.start_run({}, title="too long a wait")
        with pytest.raises(InvalidRequest) as refused:
            gh.open_gate(run, "question", "Anyone?", wait=61)
    assert refused.value.field == "wait"


async def test_the_async_client_opens_and_waits_in_one_call(server: Server, reviewer: Reviewer) -> None:
    async with server.aclient() as gh:
        run = await gh.start_run({}, title="async open and wait")
        reviewer.decide_in_background(lambda g: {"action": "respond", "text": "eu-west-1"}, run_id=run)
        gate = await gh.open_gate(run, "question", "Which region?", wait=30)
    assert gate.decision is not None and gate.decision.text == "eu-west-1"


def test_a_langgraph_checkpoint_is_one_open_and_wait_request_without_a_long_poll(
    watched: Client, proxy: FlakyProxy, reviewer: Reviewer
) -> None:
    run = watched.start_run({}, title="one request per checkpoint")
    reviewer.decide_in_background(lambda g: {"action": "respond", "text": "yes"}, run_id=run)
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:12]}"}}
    final = GatehouseHuman(watched, run_id=run, complete_run=False).invoke(asking("Go ahead?"), {}, config)
    assert final["answers"] == ["yes"]
    opens = proxy.requests("POST", r"/gates\?")
    assert len(opens) == 1 and "wait=" in opens[0].path, [s.path for s in proxy.seen]
    assert proxy.requests("GET", r"/wait") == [], "the decision came back with the open"


def test_several_interrupts_are_opened_without_holding_and_waited_on_together(
    watched: Client, proxy: FlakyProxy, reviewer: Reviewer
) -> None:
    run = watched.start_run({}, title="two at once")
    reviewer.decide_in_background(lambda g: {"action": "respond", "text": g["text"].lower()}, run_id=run, count=2)
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:12]}"}}
    final = GatehouseHuman(watched, run_id=run, complete_run=False).invoke(asking("A?", "B?"), {}, config)
    assert sorted(final["answers"]) == ["a?", "b?"]
    opens = [s.path for s in proxy.seen if s.method == "POST" and "/gates" in s.path]
    assert len(opens) >= 2 and all(p.endswith("/gates") for p in opens[:2]), (
        "holding each open in turn would ask them one by one",
        opens,
    )


def test_a_gate_still_pending_after_the_hold_is_long_polled_within_the_timeout(
    watched: Client, proxy: FlakyProxy
) -> None:
    run = watched.start_run({}, title="nobody answers")
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:12]}"}}
    with pytest.raises(Timeout):
        GatehouseHuman(watched, run_id=run, timeout=0.3, complete_run=False).invoke(asking("Anyone?"), {}, config)
    opens = proxy.requests("POST", r"/gates\?")
    assert [s.path.rsplit("?", 1)[1] for s in opens] == ["wait=0.3"]
    polls = proxy.requests("GET", r"/wait")
    assert polls and all("timeout=0.0" in s.path for s in polls), "only what is left of the timeout: none"
