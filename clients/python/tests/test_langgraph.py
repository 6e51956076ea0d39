"""The LangGraph adapter with the real langgraph package: graphs whose nodes
call ``interrupt()``, answered by a reviewer over HTTP."""

from __future__ import annotations

import hashlib
import itertools
import operator
import threading
import uuid
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from gatehouse import AsyncClient, Client, GatehouseError
from gatehouse.langgraph import GatehouseHuman, idempotency_key
from support import Reviewer, Server


class State(TypedDict, total=False):
    answers: Annotated[list[Any], operator.add]


def one_interrupt(value: Any, schema: dict[str, Any] | None = None) -> Any:
    def ask(state: State) -> State:
        return {"answers": [interrupt(value, response_schema=schema)]}

    g = StateGraph(State)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    return g.compile(checkpointer=InMemorySaver())


def stored_key(thread_id: str, interrupt_id: str, attempt: int) -> str:
    """The gate key as the server keeps it: its SHA-256 (a key may hold anything, a secret too)."""
    return hashlib.sha256(idempotency_key(thread_id, interrupt_id, attempt).encode()).hexdigest()


def interrupt_ids(graph: Any, config: dict[str, Any]) -> set[str]:
    """Every interrupt the thread's graph raised, from its checkpoints."""
    return {i.id for snapshot in graph.get_state_history(config) for i in snapshot.interrupts}


def thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:12]}"}}


def session(config: dict[str, Any]) -> str:
    return f"langgraph:{config['configurable']['thread_id']}"


@pytest.fixture
def gh(server: Server) -> Client:
    with server.client() as client:
        yield client  # type: ignore[misc]


def human_interrupt(**allow: bool) -> dict[str, Any]:
    return {
        "action_request": {"action": "send_email", "args": {"to": "a@example.com", "body": "hi"}},
        "config": {
            "allow_accept": allow.get("accept", False),
            "allow_edit": allow.get("edit", False),
            "allow_respond": allow.get("respond", False),
            "allow_ignore": allow.get("ignore", False),
        },
        "description": "Send this email?",
    }


FLAGS = ("accept", "edit", "respond", "ignore")
GATE_ACTION = {"accept": "approve", "edit": "edit", "respond": "respond", "ignore": "reject"}
COMBOS = [c for n in range(1, 5) for c in itertools.combinations(FLAGS, n)]


@pytest.mark.parametrize("allowed", COMBOS, ids=["+".join(c) for c in COMBOS])
def test_a_human_interrupt_becomes_an_approval_gate_with_exactly_its_allowed_actions(
    gh: Client, reviewer: Reviewer, allowed: tuple[str, ...]
) -> None:
    config = thread()
    last = allowed[-1]  # the reviewer takes the last allowed action, so each one is taken somewhere
    decision = {
        "accept": {"action": "approve"},
        "edit": {"action": "edit", "payload": {"to": "b@example.com", "body": "hi"}},
        "respond": {"action": "respond", "text": "tell them yourself"},
        "ignore": {"action": "reject", "text": "no"},
    }[last]
    decider = reviewer.decide_in_background(lambda g: decision, session_id=session(config))
    final = GatehouseHuman(gh, timeout=30).invoke(one_interrupt(human_interrupt(**{f: True for f in allowed})), {}, config)
    gate = decider.finish()[0]
    assert gate["spec"] == {"kind": "approval", "action": "send_email"}
    assert gate["allowed_actions"] == [GATE_ACTION[f] for f in allowed]
    assert gate["text"] == "Send this email?" and gate["payload"] == {"to": "a@example.com", "body": "hi"}
    expected = {
        "accept": {"type": "accept", "args": None},
        "edit": {"type": "edit", "args": {"action": "send_email", "args": {"to": "b@example.com", "body": "hi"}}},
        "respond": {"type": "response", "args": "tell them yourself"},
        "ignore": {"type": "ignore", "args": "no"},  # the reviewer's reason, offered as HumanResponse allows
    }[last]
    assert final["answers"] == [expected]


def test_a_human_interrupt_in_a_list_is_answered_with_a_list(gh: Client, reviewer: Reviewer) -> None:
    config = thread()
    reviewer.decide_in_background(lambda g: {"action": "approve"}, session_id=session(config))
    final = GatehouseHuman(gh, timeout=30).invoke(one_interrupt([human_interrupt(accept=True)]), {}, config)
    assert final["answers"] == [[{"type": "accept", "args": None}]]


def test_a_human_interrupt_that_allows_nothing_is_refused_before_asking(gh: Client) -> None:
    with pytest.raises(ValueError, match="allows no response"):
        GatehouseHuman(gh, timeout=30).invoke(one_interrupt(human_interrupt()), {}, thread())


def test_a_plain_question_resumes_with_the_answer_text(gh: Client, reviewer: Reviewer) -> None:
    config = thread()
    decider = reviewer.decide_in_background(lambda g: {"action": "respond", "text": "eu-west-1"}, session_id=session(config))
    final = GatehouseHuman(gh, timeout=30).invoke(one_interrupt("Which region?"), {}, config)
    assert final["answers"] == ["eu-west-1"]
    gate = decider.finish()[0]
    assert gate["spec"]["kind"] == "question" and gate["text"] == "Which region?"


def test_any_other_value_is_a_payload_review_resumed_with_the_edit(gh: Client, reviewer: Reviewer) -> None:
    config = thread()
    reviewer.decide_in_background(
        lambda g: {"action": "edit", "payload": {"sql": "DELETE FROM t WHERE id = 1"}}, session_id=session(config)
    )
    final = GatehouseHuman(gh, timeout=30).invoke(one_interrupt({"sql": "DELETE FROM t"}), {}, config)
    assert final["answers"] == [{"action": "edit", "payload": {"sql": "DELETE FROM t WHERE id = 1"}, "text": None}]


SCHEMA = {
    "type": "object",
    "properties": {"replicas": {"type": "integer", "minimum": 1, "default": 2}, "region": {"enum": ["eu", "us"]}},
    "required": ["replicas", "region"],
    "additionalProperties": False,
}


def test_an_object_response_schema_is_the_gates_form_and_gatehouse_refuses_a_wrong_answer(
    gh: Client, reviewer: Reviewer
) -> None:
    config = thread()
    refusals: list[str] = []

    def decide(gate: dict[str, Any]) -> dict[str, Any]:
        # A wrong answer never reaches the graph: Gatehouse refuses it, naming the field.
        for wrong, field in (({"replicas": 0, "region": "eu"}, "response.replicas"), ({"replicas": 3, "region": "mars"}, "response.region")):
            r = reviewer.http.post(f"/gates/{gate['id']}/resolve", json={"action": "respond", "response": wrong})
            assert r.status_code == 422, r.text
            refusals.append(r.json()["message"].split(":", 1)[0])
            assert refusals[-1] == field, r.text
        return {"action": "respond", "response": {"replicas": 3, "region": "us"}}

    decider = reviewer.decide_in_background(decide, session_id=session(config))
    final = GatehouseHuman(gh, timeout=30).invoke(one_interrupt("Scale the service how?", SCHEMA), {}, config)
    assert final["answers"] == [{"replicas": 3, "region": "us"}]
    gates = decider.finish()
    assert len(gates) == 1, "one gate: the form was fixed in place"
    assert gates[0]["response_schema"] == SCHEMA, "the schema is the gate's form, keys in the graph's order"
    assert list(gates[0]["response_schema"]["properties"]) == ["replicas", "region"]
    assert gates[0]["allowed_actions"] == ["respond"]
    assert refusals == ["response.replicas", "response.region"]


def test_a_schema_gatehouse_cannot_hold_as_a_form_is_checked_here_and_asked_again(gh: Client, reviewer: Reviewer) -> None:
    config = thread()
    answers = iter([
        {"action": "respond", "text": "lots"},  # not an integer
        {"action": "respond", "text": "0"},  # below the minimum
        {"action": "edit", "payload": 4},
    ])
    decider = reviewer.decide_in_background(lambda g: next(answers), session_id=session(config), count=3)
    schema = {"type": "integer", "minimum": 1}
    graph = one_interrupt("How many replicas?", schema)
    final = GatehouseHuman(gh, timeout=30).invoke(graph, {}, config)
    assert final["answers"] == [4]
    gates = decider.finish()
    assert gates[0]["allowed_actions"] == ["edit", "respond"]
    assert "response_schema" not in gates[0]
    assert "0 is less than the minimum of 1" in gates[2]["text"]
    keys = [g["idempotency_key"] for g in gates]
    (interrupt_id,) = interrupt_ids(graph, config)
    assert keys == [stored_key(config["configurable"]["thread_id"], interrupt_id, n) for n in (1, 2, 3)]


def test_an_answer_that_never_fits_stops_after_the_attempts(gh: Client, reviewer: Reviewer) -> None:
    config = thread()
    reviewer.decide_in_background(lambda g: {"action": "respond", "text": "lots"}, session_id=session(config), count=2)
    with pytest.raises(GatehouseError, match="no usable answer after 2 gates"):
        GatehouseHuman(gh, max_attempts=2, timeout=30).invoke(one_interrupt("How many?", {"type": "integer"}), {}, config)


def parallel_questions() -> Any:
    def ask(name: str) -> Any:
        def node(state: State) -> State:
            return {"answers": [[name, interrupt(f"Question for {name}?")]]}

        return node

    g = StateGraph(State)
    for name in ("alpha", "beta"):
        g.add_node(name, ask(name))
        g.add_edge(START, name)
        g.add_edge(name, END)
    return g.compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("first", ["alpha", "beta"])
def test_two_pending_interrupts_are_resumed_by_id_never_mixed_up(gh: Client, reviewer: Reviewer, first: str) -> None:
    config = thread()

    def review() -> None:
        run = reviewer.run_of_session(session(config))
        gates: list[dict[str, Any]] = []
        while len(gates) < 2:
            gates = reviewer.gates(run)
        by_name = {("alpha" if "alpha" in g["text"] else "beta"): g for g in gates}
        second = "beta" if first == "alpha" else "alpha"
        for name in (first, second):  # answered in either order, both pending at once
            reviewer.resolve(by_name[name]["id"], "respond", text=f"answer for {name}")

    t = threading.Thread(target=review)
    t.start()
    human = GatehouseHuman(gh, timeout=30)
    final = human.invoke(parallel_questions(), {}, config)
    t.join(10)
    assert sorted(final["answers"]) == [["alpha", "answer for alpha"], ["beta", "answer for beta"]]
    assert len({g.id for g in human.gates_opened}) == 2


def test_gate_keys_derive_from_thread_and_interrupt(gh: Client, reviewer: Reviewer) -> None:
    config = thread()
    decider = reviewer.decide_in_background(lambda g: {"action": "respond", "text": "x"}, session_id=session(config))
    graph = one_interrupt("Key?")
    GatehouseHuman(gh, timeout=30).invoke(graph, {}, config)
    gate = decider.finish()[0]
    (interrupt_id,) = interrupt_ids(graph, config)
    assert gate["idempotency_key"] == stored_key(config["configurable"]["thread_id"], interrupt_id, 1)
    assert len(idempotency_key("x" * 500, "i")) < 255, "long thread ids are hashed to fit the key"


def test_a_finished_thread_is_not_asked_again_and_its_run_completes(gh: Client, reviewer: Reviewer) -> None:
    config = thread()
    reviewer.decide_in_background(lambda g: {"action": "respond", "text": "once"}, session_id=session(config))
    graph = one_interrupt("Only once?")
    first = GatehouseHuman(gh, timeout=30).invoke(graph, {}, config)
    again = GatehouseHuman(gh, timeout=30).invoke(graph, {}, config)  # resume=True: the thread is done
    assert first == again == {"answers": ["once"]}
    runs = reviewer.http.get("/runs", params={"status": "completed", "limit": 500}).json()["runs"]
    mine = [r for r in runs if r["session_id"] == session(config)]
    assert len(mine) == 1 and mine[0]["pending_gates"] == 0


async def test_ainvoke_answers_interrupts_on_the_event_loop(server: Server, reviewer: Reviewer) -> None:
    config = thread()
    reviewer.decide_in_background(lambda g: {"action": "respond", "text": "async answer"}, session_id=session(config))
    async with server.aclient() as agh:
        final = await GatehouseHuman(agh, timeout=30).ainvoke(parallel_questions_one(), {}, config)
    assert final["answers"] == ["async answer"]


def parallel_questions_one() -> Any:
    async def ask(state: State) -> State:
        return {"answers": [interrupt("Async question?")]}

    g = StateGraph(State)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    return g.compile(checkpointer=InMemorySaver())


def test_one_human_drives_several_threads_each_in_its_own_run(gh: Client, reviewer: Reviewer) -> None:
    human = GatehouseHuman(gh, timeout=30)
    graph = one_interrupt("Which one?")
    runs = []
    for answer in ("first", "second"):
        config = thread()
        reviewer.decide_in_background(lambda g, a=answer: {"action": "respond", "text": a}, session_id=session(config))
        assert human.invoke(graph, {}, config) == {"answers": [answer]}
        runs.append(human.gates_opened[-1].run_id)
    assert runs[0] != runs[1]
    for run in runs:
        assert reviewer.http.get(f"/run/{run}/status").json()["status"] == "completed"


def test_a_pinned_run_takes_every_threads_gates_and_is_left_open(gh: Client, reviewer: Reviewer) -> None:
    run = gh.start_run({}, title="pinned")
    human = GatehouseHuman(gh, run_id=run, timeout=30)
    reviewer.decide_in_background(lambda g: {"action": "respond", "text": "ok"}, run_id=run, count=2)
    for _ in range(2):
        human.invoke(one_interrupt("Pinned?"), {}, thread())
    assert len(reviewer.gates(run, "all")) == 2
    assert reviewer.http.get(f"/run/{run}/status").json()["status"] == "active", "the owner completes a pinned run"


async def test_ainvoke_resumes_two_pending_interrupts_by_id(server: Server, reviewer: Reviewer) -> None:
    config = thread()

    def review() -> None:
        run = reviewer.run_of_session(session(config))
        gates: list[dict[str, Any]] = []
        while len(gates) < 2:
            gates = reviewer.gates(run)
        for g in reversed(gates):
            reviewer.resolve(g["id"], "respond", text=g["text"].replace("Question for ", "answer for ").rstrip("?"))

    t = threading.Thread(target=review)
    t.start()
    async with server.aclient() as agh:
        final = await GatehouseHuman(agh, timeout=30).ainvoke(parallel_questions(), {}, config)
    t.join(10)
    assert sorted(final["answers"]) == [["alpha", "answer for alpha"], ["beta", "answer for beta"]]


def test_a_gate_withdrawn_while_the_graph_waits_raises_cancelled(gh: Client, reviewer: Reviewer) -> None:
    from gatehouse import Cancelled

    config = thread()

    def cancel() -> None:
        run = reviewer.run_of_session(session(config))
        reviewer.next_gate(run)
        reviewer.http.delete(f"/run/{run}", params={"reason": "wrong thread"})

    t = threading.Thread(target=cancel)
    t.start()
    with pytest.raises(Cancelled) as caught:
        GatehouseHuman(gh, timeout=30).invoke(one_interrupt("Still there?"), {}, config)
    t.join(10)
    assert caught.value.gate.status == "cancelled"


def cancel_after_first_open(client: Any, reviewer: Reviewer) -> list[str]:
    """Makes ``client`` end the run as soon as its first gate opens (a reviewer quick to cancel);
    returns the texts of the gates it opened."""
    opens, texts = client.open_gate, []

    def open_then_cancel(run_id: str, kind: str, text: str, **options: Any) -> Any:
        gate = opens(run_id, kind, text, **options)
        texts.append(text)
        reviewer.http.delete(f"/run/{run_id}", params={"reason": "wrong thread"}).raise_for_status()
        return gate

    async def open_then_cancel_async(run_id: str, kind: str, text: str, **options: Any) -> Any:
        gate = await opens(run_id, kind, text, **options)
        texts.append(text)
        reviewer.http.delete(f"/run/{run_id}", params={"reason": "wrong thread"}).raise_for_status()
        return gate

    client.open_gate = open_then_cancel_async if isinstance(client, AsyncClient) else open_then_cancel
    return texts


def test_a_run_cancelled_between_two_interrupts_raises_cancelled_not_the_refused_second_gate(
    gh: Client, reviewer: Reviewer
) -> None:
    from gatehouse import Cancelled

    opened = cancel_after_first_open(gh, reviewer)
    with pytest.raises(Cancelled) as caught:
        GatehouseHuman(gh, timeout=30).invoke(parallel_questions(), {}, thread())
    assert len(opened) == 1, "the second gate was refused: the run had ended"
    assert caught.value.gate.text == opened[0]
    assert caught.value.gate.status == "cancelled"


async def test_ainvoke_a_run_cancelled_between_two_interrupts_raises_cancelled(server: Server, reviewer: Reviewer) -> None:
    from gatehouse import Cancelled

    async with server.aclient() as agh:
        opened = cancel_after_first_open(agh, reviewer)
        with pytest.raises(Cancelled) as caught:
            await GatehouseHuman(agh, timeout=30).ainvoke(parallel_questions(), {}, thread())
    assert len(opened) == 1, "the second gate was refused: the run had ended"
    assert caught.value.gate.status == "cancelled"


def allow(reviewer: Reviewer, action: str, args: dict[str, Any]) -> dict[str, Any]:
    """A reviewer's allow-rule for the test agent's ``action`` with exactly ``args``."""
    body = {"agent": "py-agent", "action": action, "args": args, "note": "test: allowed"}
    return reviewer.http.post("/allow-rules", json=body).raise_for_status().json()


def approval_of(action: str) -> dict[str, Any]:
    value = human_interrupt(accept=True, ignore=True)
    value["action_request"]["action"] = action
    return value


def test_with_allow_rules_a_reviewers_rule_passes_the_approval_as_it_opens(gh: Client, reviewer: Reviewer) -> None:
    action = f"send_email_{uuid.uuid4().hex[:8]}"
    rule = allow(reviewer, action, {"to": "a@example.com", "body": "hi"})
    human = GatehouseHuman(gh, timeout=30, allow_rules=True)
    final = human.invoke(one_interrupt(approval_of(action)), {}, thread())  # no reviewer is deciding
    assert final["answers"] == [{"type": "accept", "args": None}]
    (gate,) = human.gates_opened
    assert gate.status == "resolved" and gate.decision is not None
    assert gate.decision.decided_by == f"rule:{rule['id']}"


@pytest.mark.parametrize(
    "allow_rules,rule_args",
    [(False, {"to": "a@example.com", "body": "hi"}), (True, {"to": "b@example.com", "body": "hi"})],
    ids=["without-allow-rules", "rule-for-other-arguments"],
)
def test_an_approval_waits_for_a_person_without_allow_rules_or_a_rule_for_its_arguments(
    gh: Client, reviewer: Reviewer, allow_rules: bool, rule_args: dict[str, Any]
) -> None:
    from gatehouse import Timeout

    action = f"send_email_{uuid.uuid4().hex[:8]}"
    allow(reviewer, action, rule_args)
    human = GatehouseHuman(gh, timeout=0, allow_rules=allow_rules)
    with pytest.raises(Timeout):
        human.invoke(one_interrupt(approval_of(action)), {}, thread())
    (gate,) = human.gates_opened
    assert gate.pending and gate.raw["requires_human"] is not allow_rules


def test_allow_rules_leave_a_question_waiting_for_a_person(gh: Client, reviewer: Reviewer) -> None:
    from gatehouse import Timeout

    human = GatehouseHuman(gh, timeout=0, allow_rules=True)
    with pytest.raises(Timeout):
        human.invoke(one_interrupt("Which branch?"), {}, thread())
    (gate,) = human.gates_opened
    assert gate.pending and gate.raw["requires_human"] is True


def test_a_checkpoint_reads_the_thread_state_once_before_it_runs(gh: Client, reviewer: Reviewer) -> None:
    action = f"send_email_{uuid.uuid4().hex[:8]}"
    allow(reviewer, action, {"to": "a@example.com", "body": "hi"})
    graph = one_interrupt(approval_of(action))
    reads: list[dict[str, Any]] = []
    read = graph.get_state

    def counted(config: dict[str, Any], **kwargs: Any) -> Any:
        reads.append(config)
        return read(config, **kwargs)

    graph.get_state = counted
    final = GatehouseHuman(gh, timeout=30, allow_rules=True).invoke(graph, {}, thread())
    assert final["answers"] == [{"type": "accept", "args": None}]
    # Once to see whether the thread waits. The interrupt comes back in what
    # graph.invoke returned, and the resumed graph's own answer says it
    # finished, so the checkpoint is not read again for either.
    assert len(reads) == 1
