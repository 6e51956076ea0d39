"""The blocking client's lean ``http://`` path (``gatehouse._wire``): what it
sends, when it is used, and a kept-alive connection the server closed."""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator

import httpx
import pytest

from gatehouse import Client
from gatehouse._wire import IDLE_FOR, Wire, query, request_bytes, usable
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


def test_the_head_and_a_bytes_body_go_out_in_one_write() -> None:
    sent = request_bytes("POST", "/runs/r/gates", "127.0.0.1:7777", {"Content-Type": "application/json"}, b'{"kind":"question"}')
    assert sent.startswith(b"POST /runs/r/gates HTTP/1.1\r\nHost: 127.0.0.1:7777\r\n")
    assert sent.endswith(b'\r\n\r\n{"kind":"question"}')
    assert b"Content-Length: 19\r\n" in sent
    head = request_bytes("GET", "/gates/g", "h", {}, None)  # no body: the head alone, no length
    assert head == b"GET /gates/g HTTP/1.1\r\nHost: h\r\n\r\n"
    assert request_bytes("POST", "/runs/r/complete", "h", {}, b"").endswith(b"Content-Length: 0\r\n\r\n")


def test_a_header_or_target_that_would_break_a_line_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(ValueError, match="Idempotency-Key"):
        request_bytes("POST", "/runs/r/gates", "h", {"Idempotency-Key": "k\r\nX-Role: reviewer"}, b"{}")
    with pytest.raises(ValueError, match="target"):
        request_bytes("GET", "/gates/g HTTP/1.1\r\nX: y", "h", {}, None)
    with pytest.raises(ValueError, match="target"):
        request_bytes("GET", "/gates/a b", "h", {}, None)
    assert b"X-Note: a\tb" in request_bytes("GET", "/g", "h", {"X-Note": "a\tb"}, None)


class Scripted:
    """A server on loopback that answers each connection's requests with the
    raw bytes given, one answer per request (None: close without answering)."""

    def __init__(self, *connections: list[bytes | None]) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.requests: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, args=(list(connections),), daemon=True)
        self.thread.start()

    def _serve(self, connections: list[list[bytes | None]]) -> None:
        for answers in connections:
            conn, _ = self.listener.accept()
            with conn:
                pending = b""
                for answer in answers:
                    while b"\r\n\r\n" not in pending:
                        data = conn.recv(65536)
                        if not data:
                            return
                        pending += data
                    head, _, pending = pending.partition(b"\r\n\r\n")
                    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
                    while len(pending) < length:
                        pending += conn.recv(65536)
                    self.requests.append(head + b"\r\n\r\n" + pending[:length])
                    pending = pending[length:]
                    if answer is None:
                        break
                    conn.sendall(answer)

    def wire(self) -> Wire:
        return Wire(f"http://127.0.0.1:{self.port}/api/hitl", {"Authorization": "Bearer t"}, 5.0)

    def close(self) -> None:
        self.listener.close()


def test_answers_are_read_by_length_in_chunks_or_to_the_close_and_the_connection_kept_only_when_it_may_be() -> None:
    server = Scripted(
        [
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n{\"a\":1}",
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4;x=y\r\n{\"b\"\r\n3\r\n:2}\r\n0\r\nTrailer: t\r\n\r\n",
            b"HTTP/1.1 204 No Content\r\n\r\n",
            b"HTTP/1.1 201 Created\r\nConnection: close\r\ncontent-length: 2\r\n\r\n{}",
        ],
        [b"HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n[1, 2]"],
    )
    wire = server.wire()
    try:
        first = wire.request("GET", "/gates/g", params={"wait": 1})
        assert (first.status_code, first.json()) == (200, {"a": 1})
        assert wire.request("GET", "/gates/g").json() == {"b": 2}
        assert wire.request("POST", "/runs/r/complete").status_code == 204
        closing = wire.request("POST", "/runs/r/gates", body={"kind": "question"})
        assert (closing.status_code, closing.json()) == (201, {})
        # Four requests on one kept-alive connection; its Connection: close ended it.
        assert wire._idle == []
        # An HTTP/1.0 answer with no length runs to the close, on a new connection.
        assert wire.request("GET", "/gates").json() == [1, 2]
        assert wire._idle == []
    finally:
        wire.close()
        server.close()
    first_request, *_, gate_request, last_request = server.requests
    assert first_request.startswith(b"GET /api/hitl/gates/g?wait=1 HTTP/1.1\r\n")
    assert b"\r\nAuthorization: Bearer t\r\n" in first_request
    assert gate_request.endswith(b'\r\nContent-Type: application/json\r\nContent-Length: 19\r\n\r\n{"kind":"question"}')
    assert last_request.startswith(b"GET /api/hitl/gates HTTP/1.1\r\n")


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (None, "closed the connection without answering"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{}", "8 bytes short of the body"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab", "3 bytes short of the body"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5", "in the middle of a chunked body"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", "not a chunk size"),
        (b"SMTP ready\r\n\r\n", "not an HTTP status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "not an HTTP header"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: ten\r\n\r\n", "not a length"),
        (b"HTTP/1.1 200 OK\r\ncontent-le", "in the middle of its answer"),
    ],
)
def test_a_broken_or_cut_answer_is_a_protocol_error_naming_the_request_and_the_connection_is_dropped(
    answer: bytes | None, says: str
) -> None:
    server = Scripted([answer])
    wire = server.wire()
    try:
        with pytest.raises(httpx.RemoteProtocolError, match=f"GET /api/hitl/gates/g: .*{says}"):
            wire.request("GET", "/gates/g")
        assert wire._idle == []
    finally:
        wire.close()
        server.close()


def test_an_answer_that_does_not_come_in_time_is_a_read_timeout() -> None:
    listener = socket.create_server(("127.0.0.1", 0))  # accepts (the kernel's backlog) and never answers
    wire = Wire(f"http://127.0.0.1:{listener.getsockname()[1]}", {}, 5.0)
    try:
        with pytest.raises(httpx.ReadTimeout, match="no answer in time"):
            wire.request("GET", "/gates/g/wait", read_timeout=0.2)
        assert wire._idle == []
    finally:
        wire.close()
        listener.close()


def test_a_server_that_is_not_there_is_a_connect_error() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    wire = Wire(f"http://127.0.0.1:{port}", {}, 5.0)
    with pytest.raises(httpx.ConnectError, match=f"cannot connect to 127.0.0.1:{port}"):
        wire.request("GET", "/gates")
