"""The blocking client's lean ``http://`` path (``gatehouse._wire``): what it
sends, when it is used, and a kept-alive connection the server closed."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator

import httpx
import pytest

from gatehouse import Client
from gatehouse._wire import IDLE_FOR, OneSend, query, usable
from proxy import FlakyProxy
from support import Reviewer, Server


@pytest.fixture
def proxy(server: Server) -> Iterator[FlakyProxy]:
    p = FlakyProxy(server.url)
    try:
        yield p
    finally:
        p.close()


def test_a_plain_http_client_sends_its_calls_over_the_lean_path_with_every_header(
    server: Server, proxy: FlakyProxy, reviewer: Reviewer
) -> None:
    key = uuid.uuid4().hex
    with Client(proxy.url, token=server.agent) as gh:
        assert gh._wire is not None
        run = gh.start_run({"step": "é"}, title="lean path")
        gate = gh.open_gate(run, "question", "Which branch?", idempotency_key=key, wait=0.05)
        assert gate.pending and gate.text == "Which branch?"
        reviewer.resolve(gate.id, "respond", text="main")
        decided = gh.wait(gate, timeout=10, through_release=True)
        assert decided.decision is not None and decided.decision.text == "main"
    (opened,) = proxy.requests("POST", rf"/runs/{run}/gates")
    assert opened.path.endswith("?wait=0.05")
    headers = {k.lower(): v for k, v in opened.headers.items()}
    assert headers["idempotency-key"] == key
    assert headers["content-type"] == "application/json"
    assert headers["authorization"] == f"Bearer {server.agent}"
    (waited,) = proxy.requests("GET", rf"/gates/{gate.id}/wait")
    assert "through_release=true" in waited.path  # a boolean as httpx writes it


def test_an_idle_connection_the_server_closed_is_replaced_before_a_call_that_is_never_retried(server: Server) -> None:
    with Client(server.url, token=server.agent) as gh:
        first = gh.start_run({}, title="before")
        assert gh._wire is not None
        ((idle, _),) = gh._wire._idle
        assert idle.sock is not None
        idle.sock.shutdown(socket.SHUT_RDWR)  # as a server closing a kept-alive connection does
        # Starting a run is not retried once sent: it must go out on a live connection.
        second = gh.start_run({}, title="after")
        assert second != first


def test_a_connection_idle_for_five_seconds_is_closed_not_reused(server: Server) -> None:
    with Client(server.url, token=server.agent) as gh:
        first = gh.start_run({}, title="before")
        assert gh._wire is not None
        ((idle, since),) = gh._wire._idle
        # As if it had idled 5 s: the server may be closing it (it gives an idle connection 10 s).
        gh._wire._idle[0] = (idle, since - IDLE_FOR)
        second = gh.start_run({}, title="after")
        assert second != first
        assert idle.sock is None, "the stale connection was closed"
        ((kept, _),) = gh._wire._idle
        assert kept is not idle, "the call went out on a new connection"


def test_https_a_proxy_or_the_callers_own_httpx_client_go_through_httpx(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert usable("http://127.0.0.1:7777/api/hitl")
    assert not usable("https://gatehouse.example.com/api/hitl")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example.com:3128")
    monkeypatch.setenv("NO_PROXY", "localhost")
    assert not usable("http://gatehouse.internal:7777/api/hitl")
    assert usable("http://localhost:7777/api/hitl")
    monkeypatch.delenv("HTTP_PROXY")
    own = httpx.Client(base_url=server.url + "/api/hitl", headers={"Authorization": f"Bearer {server.agent}"})
    with Client(server.url, token=server.agent, http=own) as gh:
        assert gh._wire is None
        assert gh.start_run({}, title="through httpx")


def test_query_parameters_are_written_as_httpx_writes_them() -> None:
    assert query({"wait": 1.5, "through_release": True, "flag": False}) == "?wait=1.5&through_release=true&flag=false"
    assert query({"status": ["pending", "resolved"], "q": "a b/c"}) == "?status=pending&status=resolved&q=a%20b%2Fc"
    assert query(None) == "" and query({}) == ""


class RecordingSocket:
    """Stands in for a connected socket, keeping each write apart."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.writes.append(bytes(data))


def sent_by(method: str, path: str, body: bytes | None) -> list[bytes]:
    """The writes `OneSend` makes for one request."""
    conn = OneSend("127.0.0.1", 9)
    sock = RecordingSocket()
    conn.sock = sock  # type: ignore[assignment]
    conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
    return sock.writes


def test_the_head_and_a_bytes_body_go_out_in_one_send() -> None:
    (sent,) = sent_by("POST", "/runs/r/gates", b'{"kind":"question"}')
    assert sent.startswith(b"POST /runs/r/gates HTTP/1.1\r\n")
    assert sent.endswith(b'\r\n\r\n{"kind":"question"}')
    assert b"Content-Length: 19\r\n" in sent
    (head,) = sent_by("GET", "/gates/g", None)  # no body: the head alone
    assert head.startswith(b"GET /gates/g HTTP/1.1\r\n") and head.endswith(b"\r\n\r\n")
