"""A LangGraph agent run as its own process by the restart test: two
questions in a row, checkpointed in SQLite, answered through Gatehouse.

    python restart_agent.py URL TOKEN CHECKPOINTS THREAD

Prints ``asking`` before it waits and the final state as JSON at the end.
"""

from __future__ import annotations

import json
import operator
import sqlite3
import sys
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from gatehouse import Client
from gatehouse.langgraph import GatehouseHuman


class State(TypedDict, total=False):
    answers: Annotated[list[Any], operator.add]


def first(state: State) -> State:
    return {"answers": [interrupt("First question?")]}


def second(state: State) -> State:
    return {"answers": [interrupt("Second question?")]}


def main() -> None:
    url, token, checkpoints, thread = sys.argv[1:5]
    g = StateGraph(State)
    g.add_node("first", first)
    g.add_node("second", second)
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", END)
    graph = g.compile(checkpointer=SqliteSaver(sqlite3.connect(checkpoints, check_same_thread=False)))
    print("asking", flush=True)
    with Client(url, token=token) as gh:
        final = GatehouseHuman(gh).invoke(graph, {"answers": []}, {"configurable": {"thread_id": thread}})
    print(json.dumps(final), flush=True)


if __name__ == "__main__":
    main()
