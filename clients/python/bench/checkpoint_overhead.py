"""What Gatehouse adds to one LangGraph human checkpoint.

The same one-node graph, which calls `interrupt()` and finishes once
resumed, checkpointed with SqliteSaver, is driven two ways:

- **LangGraph alone**: invoke until the interrupt, read the pending
  interrupt from the checkpoint, resume it in-process (`Command(resume={id: ...})`).
- **through Gatehouse**: `GatehouseHuman.invoke`, which opens a gate for the
  interrupt, holding the request for the decision, and resumes with it.
  Measured with the run pinned (one Gatehouse run for all threads: the
  per-checkpoint cost) and with a run per thread (found by session,
  created, completed: the first checkpoint of a conversation).

Who approves (`--approver`):

- `reviewer` (the default): the interrupt is a question (`interrupt("Go
  ahead?")`); a scripted reviewer follows the event stream and answers each
  gate the moment it opens (`POST /gates/{id}/resolve`): two durable
  commits and the reviewer's turn per checkpoint.
- `rule`: the interrupt is an Agent Inbox `HumanInterrupt` for the action
  `bench_step`, and a reviewer made an allow-rule for it beforehand
  (`POST /allow-rules`); the adapter runs with `allow_rules=True`, so the
  gate passes as it opens, decided by the rule: one durable commit, no
  reviewer's turn. LangGraph alone resumes the same interrupt with
  `{"type": "accept"}`.

With `--compare-httpx`, a fourth way runs the pinned run through a client
given its own `httpx.Client` (`Client(http=...)`), which sends every call
through httpx instead of the client's lean `http://` path: the two HTTP
layers side by side in one run.

Each sample is one fresh thread from start to finish; the ways take turns
in an order shuffled each round (seeded, so a run is repeatable), so load
from other processes falls on all of them alike. Every database (the
server's and the checkpoints) is a real file under target/bench-data/.

    cargo build -p gatehouse-cli && scripts/python-env.sh
    target/pyenv/bin/python clients/python/bench/checkpoint_overhead.py --samples 200 [--approver rule]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import statistics
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any, TypedDict

import httpx
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from gatehouse import Client
from gatehouse._http import Call
from gatehouse.langgraph import GatehouseHuman

REPO = Path(__file__).resolve().parents[3]
AGENT = "bench-agent"


class State(TypedDict, total=False):
    answer: Any


ACTION = "bench_step"
"""The action the `rule` mode's interrupt asks about, and its allow-rule allows."""


def ask(state: State) -> State:
    return {"answer": interrupt("Go ahead?")}


def ask_approval(state: State) -> State:
    """An Agent Inbox `HumanInterrupt`: an approval gate of `bench_step`."""
    request = {
        "action_request": {"action": ACTION, "args": {"step": 1}},
        "config": {"allow_accept": True, "allow_edit": False, "allow_respond": False, "allow_ignore": True},
        "description": "Go ahead?",
    }
    return {"answer": interrupt(request)}


def build(checkpoints: Path, approver: str = "reviewer") -> Any:
    g = StateGraph(State)
    g.add_node("ask", ask_approval if approver == "rule" else ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    return g.compile(checkpointer=SqliteSaver(sqlite3.connect(str(checkpoints), check_same_thread=False)))


ANSWERS = {"reviewer": "yes", "rule": {"type": "accept", "args": None}}
"""What each mode's interrupt is resumed with."""


def langgraph_alone(graph: Any, thread: str, approver: str = "reviewer") -> None:
    config = {"configurable": {"thread_id": thread}}
    graph.invoke({}, config)
    pending = graph.get_state(config).interrupts
    graph.invoke(Command(resume={i.id: ANSWERS[approver] for i in pending}), config)
    assert graph.get_state(config).values["answer"] == ANSWERS[approver]


def allow_the_action(url: str, reviewer_token: str, agent: str) -> None:
    """A reviewer's allow-rule passing the agent's `bench_step` with the benchmark's arguments."""
    with Client(url, token=reviewer_token) as rev:
        body = {"agent": agent, "action": ACTION, "args": {"step": 1}, "note": "benchmark: every step allowed"}
        rev.send(Call("POST", "/allow-rules", lambda b: b, body=body))


def start_server(binary: Path, workdir: Path) -> tuple[subprocess.Popen[str], str, str, str]:
    db = workdir / "gatehouse.db"

    def token(role: str, name: str) -> str:
        cmd = [str(binary), "token", "create", "--role", role, "--name", name, "--db", str(db)]
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()

    agent, reviewer = token("agent", AGENT), token("reviewer", "bench-reviewer")
    proc = subprocess.Popen(
        [str(binary), "serve", "--bind", "127.0.0.1:0", "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("Gatehouse listening on "):
            url = line.split(" on ", 1)[1].strip()
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
            return proc, url, agent, reviewer
    raise RuntimeError("gatehouse serve did not start")


def scripted_reviewer(url: str, token: str, head: int, stop: threading.Event) -> None:
    """Decides every gate the moment its `gate_opened` event (after `head`) arrives."""
    with Client(url, token=token) as rev:
        for event in rev.events(after=head):
            if stop.is_set():
                return
            if event.type == "gate_opened":
                rev.resolve_gate(event.data["gate"]["id"], "respond", text="yes")


def measure(samples: int, warmup: int, ways: dict[str, Any], seed: int = 20) -> list[dict[str, Any]]:
    """Times each way `samples` times, interleaved (one of each per round, in
    an order shuffled afresh each round), so load from other processes falls
    on all alike. Shuffled, not rotated: a rotation keeps each way behind the
    same other way every round, and the disk work one way leaves behind (a
    LangGraph commit, a run completed) would always fall on the same next way."""
    times: dict[str, list[float]] = {label: [] for label in ways}
    order = random.Random(seed)
    for i in range(warmup + samples):
        labels = list(ways)
        order.shuffle(labels)
        for label in labels:
            thread = f"{label}-{i}-{uuid.uuid4().hex[:6]}"
            t0 = time.perf_counter()
            ways[label](thread)
            if i >= warmup:
                times[label].append((time.perf_counter() - t0) * 1000)
    results = []
    for label, ts in times.items():
        ts.sort()
        results.append({
            "label": label,
            "samples": len(ts),
            "median_ms": round(statistics.median(ts), 2),
            "p95_ms": round(ts[max(0, int(len(ts) * 0.95) - 1)], 2),
            "mean_ms": round(statistics.fmean(ts), 2),
        })
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--binary", type=Path, default=REPO / "target" / "debug" / "gatehouse")
    parser.add_argument("--approver", choices=["reviewer", "rule"], default="reviewer",
                        help="a scripted reviewer answering each gate, or an allow-rule passing it as it opens")
    parser.add_argument("--compare-httpx", action="store_true",
                        help="also time the pinned run through a client sending every call with httpx")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    workdir = REPO / "target" / "bench-data" / f"langgraph-{uuid.uuid4().hex[:8]}"
    workdir.mkdir(parents=True)
    proc, url, agent_token, reviewer_token = start_server(args.binary, workdir)
    stop = threading.Event()
    rule = args.approver == "rule"
    try:
        if rule:
            allow_the_action(url, reviewer_token, AGENT)
        else:
            # The log's head taken before the first gate can open: a reviewer
            # reading it from its own thread could start after that gate's event.
            with Client(url, token=reviewer_token) as rev:
                head = rev.list_gates(limit=1)["head_seq"]
            threading.Thread(target=scripted_reviewer, args=(url, reviewer_token, head, stop), daemon=True).start()
        graph = build(workdir / "checkpoints.sqlite", args.approver)
        with Client(url, token=agent_token) as gh:
            pinned_run = gh.start_run({}, title="bench: pinned run")
            # Only the rule mode names allow_rules, so the reviewer mode also runs an older client (PYTHONPATH).
            rules: dict[str, Any] = {"allow_rules": True} if rule else {}
            pinned = GatehouseHuman(gh, run_id=pinned_run, complete_run=False, **rules)

            def through_gatehouse(human: GatehouseHuman, thread: str) -> None:
                out = human.invoke(graph, {}, {"configurable": {"thread_id": thread}})
                assert out["answer"] == ANSWERS[args.approver], out

            ways = {
                "langgraph_alone": lambda t: langgraph_alone(graph, t, args.approver),
                "gatehouse_pinned_run": lambda t: through_gatehouse(pinned, t),
                "gatehouse_run_per_thread": lambda t: through_gatehouse(GatehouseHuman(gh, **rules), t),
            }
            if args.compare_httpx:
                own = httpx.Client(base_url=url + "/api/hitl", headers={"Authorization": f"Bearer {agent_token}"})
                via_httpx = GatehouseHuman(Client(url, token=agent_token, http=own), run_id=pinned_run,
                                           complete_run=False, **rules)
                ways["gatehouse_pinned_run_httpx"] = lambda t: through_gatehouse(via_httpx, t)
            results = measure(args.samples, args.warmup, ways)
    finally:
        stop.set()
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)
    base = results[0]["median_ms"]
    for r in results:
        r["overhead_median_ms"] = round(r["median_ms"] - base, 2)
        r["ratio"] = round(r["median_ms"] / base, 2)
    print(f"approver: {args.approver}")
    print(f"{'':30} {'median':>9} {'p95':>9} {'mean':>9} {'added (median)':>15} {'ratio':>6}")
    for r in results:
        print(f"{r['label']:30} {r['median_ms']:8.2f}ms {r['p95_ms']:8.2f}ms {r['mean_ms']:8.2f}ms "
              f"{r['overhead_median_ms']:14.2f}ms {r['ratio']:5.2f}x")
    if args.json:
        out = {"binary": str(args.binary), "approver": args.approver, "results": results}
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
