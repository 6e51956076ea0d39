"""examples/mcp works as written: its assistant configs start the tools
(stdio and HTTP) and its permission-prompt script gets the reviewer's
answer."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import anyio
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from conftest import GATEHOUSE, REPO, WAIT, review

EXAMPLES = REPO / "examples" / "mcp"
pytestmark = pytest.mark.anyio


def expand(value: str, env: dict[str, str]) -> str:
    """The assistants' `${VAR}` and `${VAR:-default}` expansion."""
    return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}", lambda m: env.get(m.group(1), m.group(2) or ""), value)


def entry(name: str) -> dict:
    config = json.loads((EXAMPLES / name).read_text())
    return config["mcpServers"]["gatehouse"]


async def test_the_stdio_config_starts_gatehouse_mcp_with_the_token(server):
    gatehouse = entry(".mcp.json")
    assert gatehouse["command"] == "gatehouse" and gatehouse["args"] == ["mcp"]
    env = {"GATEHOUSE_URL": server.url, "GATEHOUSE_TOKEN": server.agent_token}
    params = StdioServerParameters(command=str(GATEHOUSE), args=gatehouse["args"],
                                   env={k: expand(v, env) for k, v in gatehouse["env"].items()})
    with anyio.fail_after(WAIT):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                names = {tool.name for tool in (await session.list_tools()).tools}
                asked = await session.call_tool("ask_human", {"question": "Ready?", "mode": "async"})
    assert "request_permission" in names
    assert asked.structured_content["status"] == "pending", asked


async def test_the_http_config_reaches_mcp_with_the_bearer_token(server):
    gatehouse = entry("mcp-http.json")
    assert gatehouse["type"] == "http"
    url = gatehouse["url"].replace("http://127.0.0.1:7777", server.url)
    headers = {k: expand(v, {"GATEHOUSE_TOKEN": server.agent_token}) for k, v in gatehouse["headers"].items()}
    with anyio.fail_after(WAIT):
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(WAIT, read=300)) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    names = {tool.name for tool in (await session.list_tools()).tools}
    assert "request_permission" in names and "plan_propose" in names


@pytest.mark.parametrize(("decision", "code", "answer"), [
    ({"action": "edit", "payload": {"command": "rm -rf build/tmp"}}, 0,
     {"behavior": "allow", "updatedInput": {"command": "rm -rf build/tmp"}}),
    ({"action": "reject", "text": "not now"}, 1,
     {"behavior": "deny", "message": "Denied by alice in Gatehouse: not now"}),
])
def test_the_permission_prompt_script_prints_the_reviewers_answer(server, decision, code, answer):
    decided = review(server, decision)
    env = {**os.environ, "GATEHOUSE_BIN": str(GATEHOUSE), "GATEHOUSE_URL": server.url,
           "GATEHOUSE_TOKEN": server.agent_token}
    done = subprocess.run([sys.executable, str(EXAMPLES / "permission_prompt.py"), "rm -rf build"],
                          capture_output=True, text=True, env=env, timeout=WAIT)
    assert decided.result(WAIT).gate["payload"] == {"command": "rm -rf build"}
    assert done.returncode == code, done.stderr
    assert json.loads(done.stdout) == answer
