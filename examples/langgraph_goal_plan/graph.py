"""A goal and plan refinement loop, with Gatehouse as the human.

The reviewer refines the goal over as many rounds as they like, then
modifies, approves or rejects the plan (editing it in place, or saying
what to change); once the plan is approved it executes with no further
prompts. The "model" here is deterministic so the example runs anywhere;
swap `evaluate`, `make_plan` and `revise` for LLM calls in a real agent.

    python graph.py --goal "Cut the p99 latency of /search in half" --thread demo-1

(`--url`/`GATEHOUSE_URL` and `--token`/`GATEHOUSE_TOKEN` name the server
and an agent token.) State is checkpointed in SQLite (`--checkpoints`), so
killing and rerunning the same `--thread` asks nothing twice.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from datetime import datetime, timezone
from typing import Any, Optional, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class AgentState(TypedDict, total=False):
    raw_goal: str
    goal_spec: str
    goal_feasibility: str
    evaluation_notes: str
    # The goal and plan collaboration state.
    phase: str
    collaboration_history: list[dict[str, Any]]
    goal_iteration: int
    user_goal_feedback: Optional[str]
    plan: dict[str, Any]
    plan_iteration: int
    user_plan_feedback: Optional[str]
    plan_change_log: list[str]
    executed: list[str]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _history(state: AgentState, role: str, content: str) -> list[dict[str, Any]]:
    return [*state.get("collaboration_history", []), {"role": role, "content": content, "timestamp": _now()}]


# The "model": deterministic stand-ins for LLM chains. ----------------------------------


def evaluate(state: AgentState) -> dict[str, Any]:
    feedback = [h["content"] for h in state.get("collaboration_history", []) if h["role"] == "user" and h.get("on") == "goal"]
    spec = state["raw_goal"] + "".join(f"; {f}" for f in feedback)
    return {
        "goal_spec": spec,
        "goal_feasibility": "high" if len(feedback) < 5 else "medium",
        "evaluation_notes": f"{len(feedback)} refinement(s) folded in",
    }


def make_plan(state: AgentState) -> dict[str, Any]:
    goal = state["goal_spec"]
    tasks = [
        {"task_id": "analyse", "description": f"Analyse: {goal}"},
        {"task_id": "change", "description": "Make the change", "dependencies": ["analyse"]},
        {"task_id": "verify", "description": "Verify the result", "dependencies": ["change"]},
    ]
    return {"plan": {"tasks": tasks}, "plan_iteration": 1, "plan_change_log": []}


def revise(plan: dict[str, Any], feedback: str) -> tuple[dict[str, Any], str]:
    """Applies `add task: X` / `drop task: ID` feedback; anything else is noted."""
    tasks = list(plan["tasks"])
    text = feedback.strip()
    if text.lower().startswith("add task:"):
        description = text.split(":", 1)[1].strip()
        task_id = f"task_{len(tasks) + 1:03d}"
        tasks.append({"task_id": task_id, "description": description, "dependencies": [tasks[-1]["task_id"]] if tasks else []})
        return {**plan, "tasks": tasks}, f"added {task_id}: {description}"
    if text.lower().startswith("drop task:"):
        gone = text.split(":", 1)[1].strip()
        kept = [{**t, "dependencies": [d for d in t.get("dependencies", []) if d != gone]} for t in tasks if t["task_id"] != gone]
        return {**plan, "tasks": kept}, f"dropped {gone}"
    return plan, f"noted: {text}"


# Nodes -------------------------------------------------------------------------


def present_goal(state: AgentState) -> dict[str, Any]:
    response = interrupt({
        "type": "goal_review",
        "goal_spec": state["goal_spec"],
        "feasibility": state["goal_feasibility"],
        "notes": state["evaluation_notes"],
        "iteration": state.get("goal_iteration", 1),
        "prompt": f"Review the goal analysis (round {state.get('goal_iteration', 1)}): accept it, or ask for a refinement.",
    })
    refine = response.get("decision") != "accept"
    feedback = response.get("feedback", "")
    history = _history(state, "user", feedback or response.get("decision", ""))
    history[-1]["on"] = "goal"
    return {
        "user_goal_feedback": feedback,
        "phase": "refine_goal" if refine else "plan",
        "goal_iteration": state.get("goal_iteration", 1) + (1 if refine else 0),
        "collaboration_history": history,
    }


def refine_goal(state: AgentState) -> dict[str, Any]:
    return {"collaboration_history": _history(state, "agent", f"refining with: {state.get('user_goal_feedback')}")}


def present_plan(state: AgentState) -> dict[str, Any]:
    response = interrupt({
        "type": "plan_review",
        "plan": state["plan"],
        "iteration": state.get("plan_iteration", 1),
        "prompt": f"Review the plan for: {state['goal_spec']}",
    })
    decision = response.get("decision")
    phase = {"approve": "execute", "reject": "rejected"}.get(str(decision), "revise_plan")
    update: dict[str, Any] = {"phase": phase, "user_plan_feedback": response.get("feedback", "")}
    if decision == "modify" and isinstance(response.get("plan"), dict):
        # The reviewer edited the plan itself: that is the revision.
        update["plan"] = response["plan"]
        update["user_plan_feedback"] = None
        update["plan_change_log"] = [*state.get("plan_change_log", []), "replaced by the reviewer's edit"]
        update["plan_iteration"] = state.get("plan_iteration", 1) + 1
        update["phase"] = "present_plan"
    return update


def revise_plan(state: AgentState) -> dict[str, Any]:
    plan, change = revise(state["plan"], state.get("user_plan_feedback") or "")
    return {
        "plan": plan,
        "plan_iteration": state.get("plan_iteration", 1) + 1,
        "plan_change_log": [*state.get("plan_change_log", []), change],
    }


def execute(state: AgentState) -> dict[str, Any]:
    # Autonomous: no interrupt from here on.
    return {"executed": [t["task_id"] for t in state["plan"]["tasks"]], "phase": "done"}


def build_graph(checkpointer: BaseCheckpointSaver[Any] | None = None) -> Any:
    graph = StateGraph(AgentState)
    graph.add_node("evaluate", evaluate)
    graph.add_node("present_goal", present_goal)
    graph.add_node("refine_goal", refine_goal)
    graph.add_node("plan", make_plan)
    graph.add_node("present_plan", present_plan)
    graph.add_node("revise_plan", revise_plan)
    graph.add_node("execute", execute)
    graph.add_edge(START, "evaluate")
    graph.add_edge("evaluate", "present_goal")
    graph.add_conditional_edges("present_goal", lambda s: s["phase"], {"refine_goal": "refine_goal", "plan": "plan"})
    graph.add_edge("refine_goal", "evaluate")
    graph.add_edge("plan", "present_plan")
    graph.add_conditional_edges(
        "present_plan",
        lambda s: s["phase"],
        {"revise_plan": "revise_plan", "present_plan": "present_plan", "execute": "execute", "rejected": END},
    )
    graph.add_edge("revise_plan", "present_plan")
    graph.add_edge("execute", END)
    return graph.compile(checkpointer=checkpointer or InMemorySaver(), name="goal_plan")


def main() -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from gatehouse import Client
    from gatehouse.langgraph import GatehouseHuman

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--goal", required=True)
    parser.add_argument("--thread", required=True, help="the conversation; rerun with the same one to continue it")
    parser.add_argument("--checkpoints", default="goal_plan_checkpoints.sqlite")
    parser.add_argument("--url")
    parser.add_argument("--token")
    args = parser.parse_args()
    conn = sqlite3.connect(args.checkpoints, check_same_thread=False)
    graph = build_graph(SqliteSaver(conn))
    with Client(args.url, token=args.token) as gh:
        final = GatehouseHuman(gh, title=f"Goal: {args.goal}").invoke(
            graph, {"raw_goal": args.goal}, {"configurable": {"thread_id": args.thread}}
        )
    print(json.dumps({k: final.get(k) for k in ("goal_spec", "phase", "plan", "executed", "plan_change_log")}, indent=2))


if __name__ == "__main__":
    main()
