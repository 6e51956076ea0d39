"""What the tests share: the running server's address and tokens, and a
scripted reviewer that decides gates over HTTP (``POST /gates/{id}/resolve``)
from another thread, as a person in the UI would."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from gatehouse import AsyncClient, Client, Retry

REPO = Path(__file__).resolve().parents[3]

#: Fast retries, so tests of failure paths stay quick.
FAST = Retry(attempts=4, backoff=0.02, max_backoff=0.1)


@dataclass
class Server:
    url: str
    db: Path
    binary: Path
    agent: str
    other_agent: str
    reviewer: str

    def client(self, token: str | None = None, **kwargs: Any) -> Client:
        return Client(self.url, token=token or self.agent, **kwargs)

    def aclient(self, token: str | None = None, **kwargs: Any) -> AsyncClient:
        return AsyncClient(self.url, token=token or self.agent, **kwargs)


Decide = Callable[[dict[str, Any]], "dict[str, Any] | None"]


class Reviewer:
    """A reviewer with a reviewer token, scripted by the test."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.http = httpx.Client(
            base_url=server.url + "/api/hitl", headers={"Authorization": f"Bearer {server.reviewer}"}, timeout=30
        )
        self._threads: list[_Decider] = []

    def close(self) -> None:
        for t in self._threads:
            t.stop.set()
        for t in self._threads:
            t.join(timeout=5)
        self.http.close()
        # A reviewer that failed quietly would leave the test waiting: report it.
        errors = [t.error for t in self._threads if t.error is not None and not isinstance(t.error, _Stopped)]
        if errors:
            raise AssertionError(f"the scripted reviewer failed: {errors[0]!r}") from errors[0]

    def gates(self, run_id: str, status: str = "pending") -> list[dict[str, Any]]:
        """Full gates of a run (oldest first)."""
        state = self.http.get(f"/run/{run_id}/state").raise_for_status().json()
        return [g for g in state["gates"] if status == "all" or g["status"] == status]

    def run_of_session(self, session_id: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            runs = self.http.get("/runs/active", params={"session_id": session_id}).raise_for_status().json()["runs"]
            if runs:
                return str(runs[0]["id"])
            time.sleep(0.05)
        raise AssertionError(f"no run for session {session_id} within {timeout} s")

    def next_gate(self, run_id: str, seen: set[str] | None = None, timeout: float = 20) -> dict[str, Any]:
        """The oldest pending gate of the run not in ``seen``, waiting for one to open."""
        seen = seen or set()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for g in self.gates(run_id):
                if g["id"] not in seen:
                    return g
            time.sleep(0.05)
        raise AssertionError(f"no new pending gate on run {run_id} within {timeout} s")

    def resolve(
        self,
        gate_id: str,
        action: str,
        payload: Any = None,
        text: str | None = None,
        actions: Any = None,
        response: Any = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"action": action}
        if response is not None:
            body["response"] = response
        if payload is not None:
            body["payload"] = payload
        if text is not None:
            body["text"] = text
        if actions is not None:
            body["actions"] = actions
        r = self.http.post(f"/gates/{gate_id}/resolve", json=body)
        assert r.status_code == 200, r.text
        return dict(r.json())

    def decide_in_background(
        self,
        decide: Decide,
        *,
        run_id: str | None = None,
        session_id: str | None = None,
        count: int = 1,
        timeout: float = 30,
    ) -> _Decider:
        """Decides the next ``count`` gates of a run (or a session's run) as they open.

        ``decide(gate)`` returns the decision body (``{"action": ..., ...}``).
        """
        thread = _Decider(self, decide, run_id, session_id, count, timeout)
        self._threads.append(thread)
        thread.start()
        return thread


class _Stopped(Exception):
    pass


class _Decider(threading.Thread):
    def __init__(
        self, reviewer: Reviewer, decide: Decide, run_id: str | None, session_id: str | None, count: int, timeout: float
    ) -> None:
        super().__init__(daemon=True)
        self.reviewer, self.decide, self.count, self.timeout = reviewer, decide, count, timeout
        self.run_id, self.session_id = run_id, session_id
        self.decided: list[dict[str, Any]] = []
        self.error: BaseException | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            run_id = self.run_id or self.reviewer.run_of_session(str(self.session_id), self.timeout)
            seen: set[str] = set()
            while len(self.decided) < self.count:
                if self.stop.is_set():
                    raise _Stopped()
                gate = self.reviewer.next_gate(run_id, seen, self.timeout)
                seen.add(gate["id"])
                body = self.decide(gate)
                if body is None:
                    continue
                self.reviewer.resolve(
                    gate["id"],
                    body["action"],
                    body.get("payload"),
                    body.get("text"),
                    body.get("actions"),
                    body.get("response"),
                )
                self.decided.append(gate)
        except BaseException as e:  # reported by finish()
            self.error = e

    def finish(self, timeout: float = 30) -> list[dict[str, Any]]:
        """Waits for the decisions; re-raises the reviewer's failure, if any."""
        self.join(timeout)
        if self.error is not None:
            raise self.error
        assert not self.is_alive(), "the reviewer did not finish"
        return self.decided
