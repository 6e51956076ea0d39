"""`gatehouse serve --team-tools FILE` with an MCP server written with the
official Python SDK (team_tools_server.py, stdio): its tool is discovered
when the server starts, listed to a team agent's model in its prompt,
called through the team loop when the model calls it, and its answer goes
back to the model. The model is a stand-in OpenAI-compatible server on
loopback answering with a native tool call, then with text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from conftest import GATEHOUSE, WAIT, Server, _token, stop

MCP_SERVER = Path(__file__).with_name("team_tools_server.py")


class FakeModel:
    """An OpenAI-compatible chat completions endpoint answering `replies` in
    order and keeping every request it was sent."""

    def __init__(self, replies: list[dict]) -> None:
        self.replies = list(replies)
        self.requests: list[dict] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model.requests.append(body)
                message = model.replies.pop(0) if model.replies else {"role": "assistant", "content": "Done."}
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                answer = json.dumps({"id": "c", "model": "fake-model",
                                     "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}/v1"


def serve_with_tools(db: Path, tools: Path, model: FakeModel) -> tuple[subprocess.Popen, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEHOUSE_")}
    env.update(GATEHOUSE_OPENAI_BASE_URL=model.base_url, GATEHOUSE_OPENAI_MODELS="fake-model")
    process = subprocess.Popen(
        [str(GATEHOUSE), "serve", "--bind", "127.0.0.1:0", "--db", str(db), "--team-tools", str(tools)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        if "listening on " in line:
            return process, line.strip().rsplit(" ", 1)[-1]
    process.kill()
    raise AssertionError("gatehouse serve --team-tools did not say where it listens")


def until(what: str, check):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


def test_a_team_agent_calls_a_python_mcp_servers_tool_discovered_at_start(tmp_path: Path) -> None:
    call = {"id": "call_1", "type": "function",
            "function": {"name": "words.word_count", "arguments": json.dumps({"text": "one two three"})}}
    model = FakeModel([
        {"role": "assistant", "content": "Counting.", "tool_calls": [call]},
        {"role": "assistant", "content": "The text has three words."},
    ])
    tools = tmp_path / "tools.yaml"
    tools.write_text(json.dumps({
        "workspaces": str(tmp_path / "workspaces"),
        "mcp_servers": [{"name": "words", "command": sys.executable, "args": [str(MCP_SERVER)]}],
    }))
    db = tmp_path / "gatehouse.db"
    reviewer = _token(db, "reviewer", "alice")
    process, url = serve_with_tools(db, tools, model)
    try:
        server = Server(url=url, db=db, agent_token="", reviewer_token=reviewer)
        team = [{"name": "counter", "role": "counts words", "provider": "openai", "model": "fake-model",
                 "tools": ["words.word_count"]}]
        run_id = server.api("POST", "/run", {"run_input": {"prompt": "Count the words", "team": team}})["run_id"]

        def review_gate():
            for summary in server.api("GET", "/gates")["gates"]:
                if summary.get("run_id") == run_id:
                    return summary["id"]
            return None

        gate_id = until("the team's answer to review", review_gate)
        server.api("POST", f"/gates/{gate_id}/resolve", {"action": "approve"})
        until("the run to complete", lambda: server.api("GET", f"/run/{run_id}/status")["status"] == "completed")

        first, second = (json.dumps(r) for r in model.requests[:2])
        assert "words.word_count(text: str): Count the words of a text." in first, first
        assert "3 words" in second, second
        turns = server.api("GET", f"/run/{run_id}/state")["turns"]
        called = [t["metadata"]["tool_call"] for t in turns if t["metadata"].get("step") == "tool_call"]
        assert called == [{"tool_name": "words.word_count", "args": {"text": "one two three"}}]
    finally:
        stop(process)
        model.http.shutdown()
