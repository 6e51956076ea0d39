"""A restarted Python process asks nothing twice: the graph's SQLite
checkpointer keeps the pending interrupts, Gatehouse's idempotency keys
keep their gates."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

from support import Reviewer, Server

AGENT = Path(__file__).with_name("restart_agent.py")


def spawn(server: Server, checkpoints: Path, thread: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(AGENT), server.url, server.agent, str(checkpoints), thread],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_killed_and_restarted_agent_finds_its_gates_instead_of_asking_again(
    server: Server, reviewer: Reviewer, tmp_path: Path
) -> None:
    checkpoints, thread = tmp_path / "checkpoints.sqlite", f"restart-{uuid.uuid4().hex[:8]}"
    run_of = lambda: reviewer.run_of_session(f"langgraph:{thread}")  # noqa: E731

    # 1. The agent asks its first question and is killed while it waits.
    agent = spawn(server, checkpoints, thread)
    run = run_of()
    first = reviewer.next_gate(run)
    agent.kill()
    agent.wait(10)

    # 2. Restarted, it finds the same pending gate; killed again.
    agent = spawn(server, checkpoints, thread)
    assert agent.stdout is not None and agent.stdout.readline().strip() == "asking"
    assert [g["id"] for g in reviewer.gates(run)] == [first["id"]]
    agent.kill()
    agent.wait(10)

    # 3. The reviewer answers while no agent runs; the next start picks the
    #    answer up at once and asks only the second question.
    reviewer.resolve(first["id"], "respond", text="answer one")
    agent = spawn(server, checkpoints, thread)
    second = reviewer.next_gate(run, seen={first["id"]})
    assert second["text"] == "Second question?"
    reviewer.resolve(second["id"], "respond", text="answer two")
    out, err = agent.communicate(timeout=60)
    assert agent.returncode == 0, err
    assert json.loads(out.strip().splitlines()[-1]) == {"answers": ["answer one", "answer two"]}

    gates = reviewer.gates(run, "all")
    assert [g["text"] for g in gates] == ["First question?", "Second question?"], "one gate per question, ever"
    runs = reviewer.http.get("/runs", params={"limit": 500}).json()["runs"]
    assert [r["status"] for r in runs if r["session_id"] == f"langgraph:{thread}"] == ["completed"], "one run, finished"

    # 4. Once finished, running it yet again asks nothing and changes nothing.
    agent = spawn(server, checkpoints, thread)
    out, err = agent.communicate(timeout=60)
    assert json.loads(out.strip().splitlines()[-1]) == {"answers": ["answer one", "answer two"]}, err
    assert len(reviewer.gates(run, "all")) == 2
