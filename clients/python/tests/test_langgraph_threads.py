"""The LangGraph adapter over a thread's life: a second message on a finished
thread is a new turn, what ``invoke`` returns is the graph's own output, a
call that raises leaves no run open, and per-call tool edits that cannot be
applied are asked again instead of sticking the thread."""

from __future__ import annotations

import uuid
from typing import Any, TypedDict

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from gatehouse import Client
from gatehouse.langgraph import GatehouseHuman, idempotency_key
from support import Reviewer, Server


class FakeModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:
        return self


@pytest.fixture
def gh(server: Server) -> Client:
    with server.client() as client:
        yield client  # type: ignore[misc]


def thread() -> tuple[dict[str, Any], str]:
    tid = f"t-{uuid.uuid4().hex[:12]}"
    return {"configurable": {"thread_id": tid}}, f"langgraph:{tid}"


def runs_of(reviewer: Reviewer, session: str) -> list[dict[str, Any]]:
    runs = reviewer.http.get("/runs", params={"limit": 500}).raise_for_status().json()["runs"]
    return [r for r in runs if r["session_id"] == session]


def deploy_agent(replies: list[AIMessage], ran: list[dict[str, Any]]) -> Any:
    @tool
    def deploy(service: str, version: str) -> str:
        """Deploy a service at a version."""
        ran.append({"service": service, "version": version})
        return f"deployed {service}@{version}"

    middleware = HumanInTheLoopMiddleware(interrupt_on={"deploy": True}, interrupt_mode="per_call")
    return create_agent(FakeModel(messages=iter(replies)), tools=[deploy], middleware=[middleware],
                        checkpointer=InMemorySaver())


def deploy_call() -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "deploy", "args": {"service": "api", "version": "1.2"}, "id": "c1"}])


USER = {"messages": [{"role": "user", "content": "Ship api 1.2"}]}


def test_a_per_call_gate_carries_the_tools_schema_and_gatehouse_refuses_an_edit_missing_a_field(
    gh: Client, reviewer: Reviewer
) -> None:
    ran: list[dict[str, Any]] = []
    config, session = thread()
    refusals: list[tuple[int, str]] = []

    def decide(gate: dict[str, Any]) -> dict[str, Any]:
        r = reviewer.http.post(f"/gates/{gate['id']}/resolve", json={"action": "edit", "payload": {"service": "web"}})
        refusals.append((r.status_code, r.text))
        return {"action": "edit", "payload": {"service": "web", "version": "1.3"}}

    decider = reviewer.decide_in_background(decide, session_id=session)
    final = GatehouseHuman(gh, timeout=30).invoke(deploy_agent([deploy_call(), AIMessage(content="Shipped.")], ran),
                                                  USER, config)
    gate = decider.finish()[0]
    assert gate["payload_schema"]["required"] == ["service", "version"]
    assert refusals[0][0] == 422 and "version" in refusals[0][1], refusals
    assert ran == [{"service": "web", "version": "1.3"}]
    assert final["messages"][-1].content == "Shipped."


def test_a_decided_edit_the_tool_cannot_take_is_asked_again_and_the_thread_goes_on(
    gh: Client, reviewer: Reviewer
) -> None:
    """A gate decided before the tool's schema was sent (an older adapter):
    the thread used to raise on every run; now a second gate says why."""
    ran: list[dict[str, Any]] = []
    config, session = thread()
    agent = deploy_agent([deploy_call(), AIMessage(content="Shipped.")], ran)
    agent.invoke(USER, config)
    (pending,) = agent.get_state(config).interrupts
    run = gh.start_run({}, title="older adapter", session_id=session)
    key = idempotency_key(config["configurable"]["thread_id"], pending.id, 1)
    old = gh.open_gate(run, "approval", "Approve deploy", payload={"service": "api", "version": "1.2"},
                       spec={"action": "deploy"}, idempotency_key=key)
    reviewer.resolve(old.id, "edit", payload={"service": "web"})

    decider = reviewer.decide_in_background(
        lambda g: {"action": "edit", "payload": {"service": "web", "version": "2.0"}}, run_id=run)
    final = GatehouseHuman(gh, timeout=30).invoke(agent, USER, config)
    again = decider.finish()[0]
    assert "could not be used" in again["text"] and "version" in again["text"]
    # The reviewer's own attempt comes back to fix; it cannot be approved as it is.
    assert again["payload"] == {"service": "web"} and again["payload_problems"]
    assert ran == [{"service": "web", "version": "2.0"}]
    assert final["messages"][-1].content == "Shipped."


def test_a_second_message_on_a_finished_thread_runs_the_graph(gh: Client) -> None:
    config, _ = thread()
    replies = [AIMessage(content="first answer"), AIMessage(content="second answer")]
    agent = create_agent(FakeModel(messages=iter(replies)), tools=[], checkpointer=InMemorySaver())
    human = GatehouseHuman(gh, timeout=30)
    assert human.invoke(agent, {"messages": [HumanMessage("hello")]}, config)["messages"][-1].content == "first answer"
    second = human.invoke(agent, {"messages": [HumanMessage("and again")]}, config)
    assert [m.content for m in second["messages"]] == ["hello", "first answer", "and again", "second answer"]
    # The same input once more is a restarted caller, not a new turn: nothing runs.
    again = human.invoke(agent, {"messages": [HumanMessage("and again")]}, config)
    assert len(again["messages"]) == 4


class Pair(TypedDict, total=False):
    pair: tuple[str, str]


def pair_graph(name: str | None = None) -> Any:
    def ask(state: Pair) -> Pair:
        return {"pair": ("region", interrupt("Which region?"))}

    g = StateGraph(Pair)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    return g.compile(checkpointer=InMemorySaver(), name=name)


def test_invoke_returns_what_the_graph_returns_and_an_unnamed_graph_is_titled_once(
    gh: Client, reviewer: Reviewer
) -> None:
    config, session = thread()
    reviewer.decide_in_background(lambda g: {"action": "respond", "text": "eu"}, session_id=session)
    final = GatehouseHuman(gh, timeout=30).invoke(pair_graph(), {}, config)
    assert final == {"pair": ("region", "eu")}, "a tuple stays a tuple"
    (run,) = runs_of(reviewer, session)
    assert run["title"] == f"LangGraph · thread {config['configurable']['thread_id']}"


def test_a_call_that_raises_ends_its_run_as_failed_with_the_reason(gh: Client, reviewer: Reviewer) -> None:
    config, session = thread()
    no_response = {"action_request": {"action": "send", "args": {}}, "config": {}, "description": "Send?"}

    def ask(state: Pair) -> Pair:
        return {"pair": ("x", interrupt(no_response))}

    g = StateGraph(Pair)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    with pytest.raises(ValueError, match="allows no response"):
        GatehouseHuman(gh, timeout=30).invoke(g.compile(checkpointer=InMemorySaver()), {}, config)
    (run,) = runs_of(reviewer, session)
    assert run["status"] == "failed"
    status = reviewer.http.get(f"/run/{run['id']}/status").json()
    assert "allows no response" in str(status), status


def test_an_answer_langgraph_itself_refuses_is_asked_again_with_its_reason(gh: Client, reviewer: Reviewer) -> None:
    """A validator the published schema cannot show: Gatehouse and the
    adapter accept the answer, LangGraph's own check refuses it."""
    from pydantic import BaseModel, field_validator

    class Replicas(BaseModel):
        count: int

        @field_validator("count")
        @classmethod
        def at_least_one(cls, value: int) -> int:
            if value < 1:
                raise ValueError("count must be at least 1")
            return value

    class Answers(TypedDict, total=False):
        replicas: Any

    def ask(state: Answers) -> Answers:
        return {"replicas": interrupt("How many replicas?", response_schema=Replicas)}

    g = StateGraph(Answers)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    config, session = thread()
    answers = iter([{"count": 0}, {"count": 3}])
    decider = reviewer.decide_in_background(lambda gate: {"action": "respond", "response": next(answers)},
                                            session_id=session, count=2)
    final = GatehouseHuman(gh, timeout=30).invoke(g.compile(checkpointer=InMemorySaver()), {}, config)
    first, second = decider.finish()
    assert "count must be at least 1" in second["text"] and "could not be used" in second["text"]
    replicas = final["replicas"]
    assert (replicas.count if isinstance(replicas, Replicas) else replicas["count"]) == 3


async def test_ainvoke_runs_a_second_message_and_a_call_that_raises_fails_its_run(
    server: Server, reviewer: Reviewer
) -> None:
    config, session = thread()
    replies = [AIMessage(content="first answer"), AIMessage(content="second answer")]
    agent = create_agent(FakeModel(messages=iter(replies)), tools=[], checkpointer=InMemorySaver())
    async with server.aclient() as agh:
        human = GatehouseHuman(agh, timeout=30)
        await human.ainvoke(agent, {"messages": [HumanMessage("hello")]}, config)
        second = await human.ainvoke(agent, {"messages": [HumanMessage("and again")]}, config)
        assert second["messages"][-1].content == "second answer"

        failing, failing_session = thread()
        no_response = {"action_request": {"action": "send", "args": {}}, "config": {}, "description": "Send?"}

        async def ask(state: Pair) -> Pair:
            return {"pair": ("x", interrupt(no_response))}

        g = StateGraph(Pair)
        g.add_node("ask", ask)
        g.add_edge(START, "ask")
        g.add_edge("ask", END)
        with pytest.raises(ValueError, match="allows no response"):
            await human.ainvoke(g.compile(checkpointer=InMemorySaver()), {}, failing)
    assert [r["status"] for r in runs_of(reviewer, failing_session)] == ["failed"]
