"""The examples run as a user would run them: the LangGraph, OpenAI Agents
SDK, Pydantic AI and Claude Agent SDK (offline) agents under examples/ and
examples/deploy.sh, each decided by a reviewer over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from support import REPO, Reviewer, Server


def agent_token(server: Server, name: str) -> str:
    out = subprocess.run(
        [str(server.binary), "token", "create", "--role", "agent", "--name", name, "--db", str(server.db)],
        check=True, capture_output=True, text=True,
    )
    return out.stdout.strip()


def pending_gate_of(reviewer: Reviewer, agent: str, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        gates = reviewer.http.get("/gates", params={"agent": agent}).json()["gates"]
        if gates:
            return dict(reviewer.http.get(f"/gates/{gates[0]['id']}").json()["gate"])
        time.sleep(0.05)
    raise AssertionError(f"no pending gate from {agent}")


def test_the_langgraph_approval_example_runs_the_tool_calls_as_the_reviewer_edited_them(
    server: Server, reviewer: Reviewer, tmp_path: Path
) -> None:
    name = f"deploy-agent-{uuid.uuid4().hex[:6]}"
    env = {**os.environ, "GATEHOUSE_URL": server.url, "GATEHOUSE_TOKEN": agent_token(server, name)}
    agent = subprocess.Popen(
        [sys.executable, str(REPO / "examples" / "langgraph_approval" / "agent.py"), "Ship web 1.4.2",
         "--checkpoints", str(tmp_path / "cp.sqlite")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    gate = pending_gate_of(reviewer, name)
    actions = gate["actions"]
    assert [a["name"] for a in actions] == ["deploy"], "post_status is not gated"
    edited = {**actions[0]["args"], "env": "staging"}
    reviewer.resolve(gate["id"], "edit", actions=[{"id": actions[0]["id"], "action": "edit", "args": edited}])
    out, err = agent.communicate(timeout=60)
    assert agent.returncode == 0, err
    results = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    by_tool = {r["tool"]: r["result"] for r in results}
    # langchain tells the model a reviewer replaced the call, above the tool's own result.
    assert by_tool["deploy"].endswith("\n\nTool response:\ndeployed web 1.4.2 to staging")
    assert by_tool["post_status"] == "posted: web 1.4.2 is going to production"
    assert out.strip().splitlines()[-1] == "Done: Ship web 1.4.2"


def run_deploy(server: Server, token: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "GATEHOUSE_URL": server.url, "GATEHOUSE_TOKEN": token, "GATEHOUSE": str(server.binary)}
    return subprocess.Popen(
        ["bash", str(REPO / "examples" / "deploy.sh"), *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def test_deploy_sh_deploys_what_the_reviewer_approved(server: Server, reviewer: Reviewer) -> None:
    name = f"deploy-sh-{uuid.uuid4().hex[:6]}"
    token = agent_token(server, name)
    script = run_deploy(server, token, "42", "prod")
    gate = pending_gate_of(reviewer, name)
    assert gate["text"] == "Deploy build **42** to **prod**?" and gate["priority"] == "high"
    reviewer.resolve(gate["id"], "edit", {**gate["payload"], "env": "staging"})
    out, err = script.communicate(timeout=60)
    assert script.returncode == 0, err
    assert out.strip() == "deploying build 42 to staging (approved by py-reviewer)"

    script = run_deploy(server, token, "43", "prod")
    reviewer.resolve(pending_gate_of(reviewer, name)["id"], "reject", text="freeze week")
    out, err = script.communicate(timeout=60)
    assert script.returncode == 1
    assert "rejected" in err and json.loads(out)["text"] == "freeze week"


def run_example(server: Server, name: str, script: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "GATEHOUSE_URL": server.url, "GATEHOUSE_TOKEN": agent_token(server, name)}
    return subprocess.Popen([sys.executable, str(REPO / "examples" / script), *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_the_openai_agents_example_deploys_once_approved(server: Server, reviewer: Reviewer, tmp_path: Path) -> None:
    name = f"oa-example-{uuid.uuid4().hex[:6]}"
    agent = run_example(server, name, "openai_agents_approval/agent.py", "--state-dir", str(tmp_path))
    gate = pending_gate_of(reviewer, name)
    assert gate["payload"] == {"service": "web", "version": "1.4.2", "env": "production"}
    reviewer.resolve(gate["id"], "approve")
    out, err = agent.communicate(timeout=120)
    assert agent.returncode == 0, err
    assert out.strip().splitlines()[-1] == "Done: deployed web 1.4.2 to production"


def test_the_pydantic_ai_example_deploys_what_the_reviewer_edited(server: Server, reviewer: Reviewer) -> None:
    name = f"pa-example-{uuid.uuid4().hex[:6]}"
    agent = run_example(server, name, "pydantic_ai_approval/agent.py")
    gate = pending_gate_of(reviewer, name)
    reviewer.resolve(gate["id"], "edit", {**gate["payload"], "env": "staging"})
    out, err = agent.communicate(timeout=120)
    assert agent.returncode == 0, err
    assert out.strip().splitlines()[-1] == "Done: deployed web 1.4.2 to staging"


def test_the_claude_agent_sdk_example_offline_denies_with_the_reviewers_reason(server: Server, reviewer: Reviewer) -> None:
    name = f"claude-example-{uuid.uuid4().hex[:6]}"
    agent = run_example(server, name, "claude_agent_sdk_permissions/agent.py", "--offline")
    gate = pending_gate_of(reviewer, name)
    assert gate["payload"] == {"command": "rm -rf build/"}
    reviewer.resolve(gate["id"], "reject", text="keep the build")
    out, err = agent.communicate(timeout=120)
    assert agent.returncode == 0, err
    assert "PermissionResultDeny" in out and "keep the build" in out
