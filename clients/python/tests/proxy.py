"""A misbehaving proxy in front of the real server, to test retries.

Each :class:`Fault` matches requests by method and path and, a set number
of times, loses the response after the server acted (the connection closes
with no answer), answers 502 after the server acted, or answers 503/429
without forwarding. Every request is recorded. Event streams are relayed
line by line and can be cut after a number of events.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "content-encoding"}


@dataclass
class Fault:
    method: str
    path: str
    """A regular expression searched in the request path."""
    kind: str
    """``drop`` (forward, then close without answering), ``502`` (forward, then 502),
    ``503`` or ``429`` (answer at once, not forwarded)."""
    times: int = 1

    def matches(self, method: str, path: str) -> bool:
        return self.times > 0 and method == self.method and re.search(self.path, path) is not None


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    forwarded: bool


@dataclass
class FlakyProxy:
    upstream: str
    faults: list[Fault] = field(default_factory=list)
    cut_events_after: int | None = None
    """Close each event stream after relaying this many events."""
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._http = httpx.Client(base_url=self.upstream, timeout=60)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                proxy._handle(self)

            do_POST = do_PUT = do_DELETE = do_GET

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._http.close()

    def requests(self, method: str, path: str) -> list[Seen]:
        return [s for s in self.seen if s.method == method and re.search(path, s.path)]

    def _fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.matches(method, path):
                    fault.times -= 1
                    return fault
        return None

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        method, path = h.command, h.path
        length = int(h.headers.get("content-length") or 0)
        body = h.rfile.read(length) if length else b""
        headers = {k: v for k, v in h.headers.items() if k.lower() not in HOP_BY_HOP}
        fault = self._fault(method, path)
        forwarded = fault is None or fault.kind in ("drop", "502")
        self.seen.append(Seen(method, path, dict(h.headers.items()), forwarded))
        if fault is not None and fault.kind in ("503", "429"):
            h.send_response(int(fault.kind))
            h.send_header("Retry-After", "0")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        if path.startswith("/api/hitl/events"):
            self._relay_stream(h, path, headers)
            return
        response = self._http.request(method, path, headers=headers, content=body)
        if fault is not None and fault.kind == "drop":
            h.close_connection = True  # the server acted; the answer is lost
            return
        status = 502 if fault is not None else response.status_code
        content = b"" if fault is not None else response.content
        h.send_response(status)
        for k, v in response.headers.items():
            if k.lower() not in HOP_BY_HOP and fault is None:
                h.send_header(k, v)
        h.send_header("Content-Length", str(len(content)))
        h.end_headers()
        h.wfile.write(content)

    def _relay_stream(self, h: BaseHTTPRequestHandler, path: str, headers: dict[str, str]) -> None:
        with self._http.stream("GET", path, headers=headers) as upstream:
            h.send_response(upstream.status_code)
            h.send_header("Content-Type", upstream.headers.get("content-type", "text/event-stream"))
            h.end_headers()
            events = 0
            for line in upstream.iter_lines():
                h.wfile.write((line + "\n").encode())
                h.wfile.flush()
                if line == "" and self.cut_events_after is not None:
                    events += 1
                    if events >= self.cut_events_after:
                        break
        h.close_connection = True
