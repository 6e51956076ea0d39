"""Where a LangGraph checkpoint through Gatehouse spends its time.

Against the same server and scripted reviewer as `checkpoint_overhead.py`:

- **the calls alone**: an agent opening a gate (no wait), reading it, and a
  reviewer resolving it, one after the other, with no graph around them;
- **open and wait**: one request opening a gate and held until the scripted
  reviewer (following the event stream) decides it;
- **inside the adapter**: `GatehouseHuman.invoke` on a pinned run with
  `graph.invoke`, `graph.get_state` and `Client.open_gate` timed per call.

With `--approver rule`, a reviewer's allow-rule passes every gate as it
opens instead (no scripted reviewer): the calls alone add an approval
passed by the rule, and the adapter runs `checkpoint_overhead.py`'s rule
graph with `allow_rules=True`.

    cargo build --release -p gatehouse-cli && scripts/python-env.sh
    target/pyenv/bin/python clients/python/bench/checkpoint_breakdown.py --binary target/release/gatehouse [--approver rule]
"""

from __future__ import annotations

import argparse
import collections
import shutil
import statistics
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable

import httpx
from checkpoint_overhead import ACTION, AGENT, REPO, allow_the_action, build, scripted_reviewer, start_server

from gatehouse import Client
from gatehouse.langgraph import GatehouseHuman


def summary(ms: list[float]) -> str:
    ms = sorted(ms)
    return f"median {statistics.median(ms):6.2f} ms  p95 {ms[max(0, int(len(ms) * 0.95) - 1)]:6.2f} ms"


def timed(times: dict[str, list[float]], obj: Any, name: str, label: str) -> None:
    """Replaces `obj.name` with a wrapper recording each call's time under `label`."""
    inner: Callable[..., Any] = getattr(obj, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            times[label].append((time.perf_counter() - t0) * 1000)

    setattr(obj, name, wrapper)


def calls_alone(url: str, agent: str, reviewer: str, samples: int) -> None:
    opens: list[float] = []
    reads: list[float] = []
    resolves: list[float] = []
    with Client(url, token=agent) as gh, Client(url, token=reviewer) as rev:
        run = gh.start_run({}, title="bench: calls alone")
        for i in range(samples):
            t0 = time.perf_counter()
            gate = gh.open_gate(run, "question", f"q{i}")
            t1 = time.perf_counter()
            gh.gate(gate.id)
            t2 = time.perf_counter()
            rev.resolve_gate(gate.id, "respond", text="yes")
            t3 = time.perf_counter()
            opens.append((t1 - t0) * 1000)
            reads.append((t2 - t1) * 1000)
            resolves.append((t3 - t2) * 1000)
    print(f"{'open a gate (no wait)':40} {summary(opens)}")
    print(f"{'read a gate':40} {summary(reads)}")
    print(f"{'resolve a gate (reviewer)':40} {summary(resolves)}")


def rule_passed(url: str, agent: str, samples: int) -> None:
    """An approval the reviewer's allow-rule passes as it opens, held as the adapter holds it;
    through the client's lean `http://` path and through httpx (`Client(http=...)`), taking turns."""
    own = httpx.Client(base_url=url + "/api/hitl", headers={"Authorization": f"Bearer {agent}"})
    clients = {"lean http://": Client(url, token=agent), "httpx": Client(url, token=agent, http=own)}
    held: dict[str, list[float]] = {label: [] for label in clients}
    run = clients["httpx"].start_run({}, title="bench: passed by a rule")
    for i in range(samples):
        for label, gh in clients.items() if i % 2 else reversed(clients.items()):
            t0 = time.perf_counter()
            gate = gh.open_gate(run, "approval", "Go ahead?", spec={"action": ACTION}, payload={"step": 1},
                                allowed_actions=["approve", "reject"], wait=50, idempotency_key=uuid.uuid4().hex)
            held[label].append((time.perf_counter() - t0) * 1000)
            assert gate.decision is not None and gate.decision.decided_by.startswith("rule:"), gate
    for label, gh in clients.items():
        print(f"{'rule-passed open (' + label + ')':40} {summary(held[label])}")
        gh.close()


def open_and_wait(url: str, agent: str, samples: int, report: bool = True) -> None:
    held: list[float] = []
    with Client(url, token=agent) as gh:
        run = gh.start_run({}, title="bench: open and wait")
        for i in range(samples):
            t0 = time.perf_counter()
            gate = gh.open_gate(run, "question", f"h{i}", wait=30)
            held.append((time.perf_counter() - t0) * 1000)
            # In the warm-up the reviewer may not follow the stream yet: a gate opened before it did stays pending.
            assert not (report and gate.pending), "the scripted reviewer decides every gate"
    if report:
        print(f"{'open and wait, reviewer deciding':40} {summary(held)}")


def inside_the_adapter(url: str, agent: str, workdir: Path, samples: int, approver: str = "reviewer") -> None:
    graph = build(workdir / "checkpoints.sqlite", approver)
    times: dict[str, list[float]] = collections.defaultdict(list)
    totals: list[float] = []
    with Client(url, token=agent) as gh:
        run = gh.start_run({}, title="bench: inside")
        human = GatehouseHuman(gh, run_id=run, complete_run=False, allow_rules=approver == "rule")
        for i in range(5):  # warm up
            human.invoke(graph, {}, {"configurable": {"thread_id": f"warm-{i}"}})
        timed(times, graph, "invoke", "graph.invoke")
        timed(times, graph, "get_state", "graph.get_state")
        timed(times, gh, "open_gate", "Client.open_gate (held for the decision)")
        timed(times, gh, "wait", "Client.wait (long poll)")
        for i in range(samples):
            t0 = time.perf_counter()
            human.invoke(graph, {}, {"configurable": {"thread_id": f"t{i}-{uuid.uuid4().hex[:6]}"}})
            totals.append((time.perf_counter() - t0) * 1000)
    for label, ms in times.items():
        print(f"{label:40} {len(ms) / samples:.1f} per checkpoint, {summary(ms)}")
    print(f"{'the whole checkpoint':40} {summary(totals)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=150)
    parser.add_argument("--binary", type=Path, default=REPO / "target" / "debug" / "gatehouse")
    parser.add_argument("--approver", choices=["reviewer", "rule"], default="reviewer")
    args = parser.parse_args()
    workdir = REPO / "target" / "bench-data" / f"breakdown-{uuid.uuid4().hex[:8]}"
    workdir.mkdir(parents=True)
    proc, url, agent, reviewer = start_server(args.binary, workdir)
    stop = threading.Event()
    try:
        calls_alone(url, agent, reviewer, args.samples)
        if args.approver == "rule":
            allow_the_action(url, reviewer, AGENT)
            rule_passed(url, agent, args.samples)
            inside_the_adapter(url, agent, workdir, args.samples, "rule")
            return
        with Client(url, token=reviewer) as rev:
            head = rev.list_gates(limit=1)["head_seq"]
        threading.Thread(target=scripted_reviewer, args=(url, reviewer, head, stop), daemon=True).start()
        open_and_wait(url, agent, 5, report=False)  # warm-up: the reviewer follows the stream once it decides
        open_and_wait(url, agent, args.samples)
        inside_the_adapter(url, agent, workdir, args.samples)
    finally:
        stop.set()
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
