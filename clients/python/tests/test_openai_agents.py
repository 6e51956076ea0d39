"""The OpenAI Agents SDK adapter with the real ``openai-agents`` package and
its own ``ScriptedModel`` (no network): tools with ``needs_approval`` are
decided in Gatehouse, and a process killed while it waits resumes the same
run with the same gates."""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from openai_agents_agent import NO_TRACING, deploy_agent

from gatehouse import Cancelled
from gatehouse.openai_agents import GatehouseApprovals
from support import Reviewer, Server

AGENT = Path(__file__).with_name("openai_agents_agent.py")


def conversation() -> tuple[str, str]:
    c = f"oa-{uuid.uuid4().hex[:10]}"
    return c, f"openai-agents:{c}"


def runs_of(reviewer: Reviewer, session: str) -> list[dict[str, Any]]:
    runs = reviewer.http.get("/runs", params={"limit": 500}).raise_for_status().json()["runs"]
    return [r for r in runs if r["session_id"] == session]


async def test_an_approved_tool_call_runs_and_the_run_completes(server: Server, reviewer: Reviewer, tmp_path: Path) -> None:
    ran: list[dict[str, str]] = []
    conv, session = conversation()
    decider = reviewer.decide_in_background(lambda g: {"action": "approve"}, session_id=session)
    async with server.aclient() as gh:
        approvals = GatehouseApprovals(gh, state_dir=tmp_path, timeout=30)
        result = await approvals.run(deploy_agent(ran), "Ship api 1.2", conversation_id=conv, run_config=NO_TRACING)
    gate = decider.finish()[0]
    assert gate["spec"] == {"kind": "approval", "action": "deploy"}
    assert gate["payload"] == {"service": "api", "version": "1.2"}
    assert gate["allowed_actions"] == ["approve", "reject"]
    assert gate["payload_schema"]["required"] == ["service", "version"]
    assert ran == [{"service": "api", "version": "1.2"}]
    assert result.final_output == "Done: deployed api@1.2"
    assert [r["status"] for r in runs_of(reviewer, session)] == ["completed"]
    assert list(tmp_path.iterdir()) == [], "the saved state goes once the run is done"


async def test_a_rejection_skips_the_tool_and_the_model_hears_the_reason(
    server: Server, reviewer: Reviewer, tmp_path: Path
) -> None:
    ran: list[dict[str, str]] = []
    conv, session = conversation()
    reviewer.decide_in_background(lambda g: {"action": "reject", "text": "freeze until Monday"}, session_id=session)
    async with server.aclient() as gh:
        result = await GatehouseApprovals(gh, state_dir=tmp_path, timeout=30).run(
            deploy_agent(ran), "Ship api 1.2", conversation_id=conv, run_config=NO_TRACING)
    assert ran == []
    assert result.final_output == "Done: freeze until Monday"


async def test_a_run_cancelled_while_waiting_raises_and_drops_the_saved_state(
    server: Server, reviewer: Reviewer, tmp_path: Path
) -> None:
    conv, session = conversation()

    def cancel() -> None:
        run = reviewer.run_of_session(session)
        reviewer.next_gate(run)
        reviewer.http.delete(f"/run/{run}", params={"reason": "wrong service"}).raise_for_status()

    t = threading.Thread(target=cancel)
    t.start()
    async with server.aclient() as gh:
        with pytest.raises(Cancelled):
            await GatehouseApprovals(gh, state_dir=tmp_path, timeout=30).run(
                deploy_agent([]), "Ship api 1.2", conversation_id=conv, run_config=NO_TRACING)
    t.join(10)
    assert [r["status"] for r in runs_of(reviewer, session)] == ["cancelled"]
    assert list(tmp_path.iterdir()) == [], "a later call starts afresh instead of finding the cancelled gate"


def spawn(server: Server, state_dir: Path, conv: str, ran_file: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(AGENT), server.url, server.agent, str(state_dir), conv, str(ran_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def test_a_process_killed_while_waiting_resumes_the_same_run_and_gate(
    server: Server, reviewer: Reviewer, tmp_path: Path
) -> None:
    state_dir, ran_file = tmp_path / "state", tmp_path / "ran.txt"
    conv, session = conversation()

    # 1. The agent asks for approval and is killed while it waits.
    agent = spawn(server, state_dir, conv, ran_file)
    # A fresh interpreter importing the SDK is slow on a loaded machine: wait generously.
    try:
        run = reviewer.run_of_session(session, timeout=120)
    except AssertionError:
        agent.kill()
        raise AssertionError(f"the agent asked nothing: {agent.communicate(timeout=10)[1]}") from None
    first = reviewer.next_gate(run, timeout=60)
    agent.kill()
    agent.wait(10)
    assert list(state_dir.iterdir()), "the run state was saved before waiting"

    # 2. The reviewer approves while no agent runs; the restarted agent picks
    #    the decision up from the same gate, runs the tool once, and finishes.
    reviewer.resolve(first["id"], "approve")
    agent = spawn(server, state_dir, conv, ran_file)
    out, err = agent.communicate(timeout=120)
    assert agent.returncode == 0, err
    assert out.strip().splitlines()[-1] == "Done: deployed api@1.2"
    assert ran_file.read_text() == "api@1.2\n", "the tool ran once, after the approval"
    assert [g["id"] for g in reviewer.gates(run, "all")] == [first["id"]], "one gate, ever"
    assert [r["status"] for r in runs_of(reviewer, session)] == ["completed"], "one run, finished"
    assert list(state_dir.iterdir()) == []
