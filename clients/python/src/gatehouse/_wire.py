"""A lean HTTP/1.1 path for the blocking client's plain-``http://`` calls.

An agent's checkpoint is one request on a kept-alive loopback connection,
and ``httpx`` spends more time building and parsing that request than the
server spends answering a read (URL objects parsed several times a call,
headers and body written to the socket in two sends, so the server wakes
twice). :class:`Wire` sends the same request with the standard library's
``http.client``: the request line, headers and body in one send (which
``http.client`` itself writes in two: :class:`OneSend`), on a connection
kept alive and reused.

It answers with an ordinary :class:`httpx.Response` and fails with the
same ``httpx`` exceptions the default transport raises in the same
situations, so :meth:`gatehouse.Client.send` keeps one retry rule:
:class:`httpx.ConnectError` or :class:`httpx.ConnectTimeout` when the
request never left (always safe to retry), and
:class:`httpx.RemoteProtocolError`, :class:`httpx.ReadError`,
:class:`httpx.WriteError` or :class:`httpx.ReadTimeout` once it may have
reached the server (retried only when the call is idempotent). A kept
connection the server closed while idle is noticed before it is used, and
replaced; one idle for :data:`IDLE_FOR` is not used again, so a request
never goes out on a connection the server is closing at that moment.

Only for ``http://`` without a proxy in the environment: ``https://``, a
proxy, an ``http=`` client of the caller's own and the event stream all go
through ``httpx``.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import threading
import time
import urllib.request
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import httpx

USER_AGENT = "gatehouse-python"


def usable(url: str) -> bool:
    """Whether ``url`` (the API's base) may go over the lean path: plain
    ``http://`` that no proxy from the environment applies to."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return False
    proxies = urllib.request.getproxies()
    if not proxies.get("http") and not proxies.get("all"):
        return True
    return bool(urllib.request.proxy_bypass(parts.netloc))


def body_bytes(body: Any) -> bytes:
    """A JSON body encoded as ``httpx`` encodes ``json=``."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def query_value(value: Any) -> str:
    """A query parameter as ``httpx`` writes it (``true``/``false`` for booleans)."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def query(params: dict[str, Any] | None) -> str:
    if not params:
        return ""
    pairs: list[tuple[str, str]] = []
    for key, value in params.items():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            pairs.append((key, query_value(item)))
    return "?" + urlencode(pairs, quote_via=quote)


IDLE_FOR = 5.0
"""Seconds a kept-alive connection may idle before it is closed rather than
reused: well under the 10 s the server gives an idle connection to send the
next request's headers before it closes it (as ``httpx`` keeps one 5 s)."""


class Wire:
    """Kept-alive ``http.client`` connections to one server, safe to share between threads."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout: float) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.headers = {"User-Agent": USER_AGENT, "Accept": "application/json", **headers}
        self.timeout = timeout
        self._idle: list[tuple[http.client.HTTPConnection, float]] = []
        self._lock = threading.Lock()
        self._closed = False

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            conn.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        read_timeout: float | None = None,
    ) -> httpx.Response:
        """Sends one request and reads the whole answer."""
        target = self.prefix + path + query(params)
        all_headers = {**self.headers, **(headers or {})}
        payload: bytes | None = None
        if body is not None:
            payload = body_bytes(body)
            all_headers["Content-Type"] = "application/json"
        elif method in ("POST", "PUT", "PATCH"):
            payload = b""
        conn = self._take()
        try:
            status, head, content = self._exchange(conn, method, target, payload, all_headers, read_timeout)
        except BaseException:
            conn.close()
            raise
        self._give_back(conn)
        response = httpx.Response(status, headers=head, content=content)
        if not response.is_success:
            # Error answers name the URL asked (a wrong base URL, say): give them their request.
            response.request = httpx.Request(method, f"http://{self.host}:{self.port}{target}")
        return response

    def _exchange(
        self,
        conn: http.client.HTTPConnection,
        method: str,
        target: str,
        payload: bytes | None,
        headers: dict[str, str],
        read_timeout: float | None,
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        if conn.sock is None:
            try:
                conn.connect()
            except socket.timeout as e:
                raise httpx.ConnectTimeout(f"connecting to {self.host}:{self.port} timed out") from e
            except OSError as e:
                raise httpx.ConnectError(f"cannot connect to {self.host}:{self.port}: {e}") from e
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            # A bytes body: the head and the body go out in one send (OneSend).
            conn.request(method, target, body=payload, headers=headers)
        except socket.timeout as e:
            raise httpx.WriteTimeout(f"{method} {target}: sending timed out") from e
        except OSError as e:
            raise httpx.WriteError(f"{method} {target}: {e}") from e
        if conn.sock is not None:
            conn.sock.settimeout(read_timeout or self.timeout)
        try:
            answer = conn.getresponse()
            content = answer.read()
        except socket.timeout as e:
            raise httpx.ReadTimeout(f"{method} {target}: no answer in time") from e
        except (http.client.RemoteDisconnected, http.client.IncompleteRead, http.client.BadStatusLine) as e:
            raise httpx.RemoteProtocolError(f"{method} {target}: {type(e).__name__}: {e}") from e
        except (OSError, http.client.HTTPException) as e:
            raise httpx.ReadError(f"{method} {target}: {type(e).__name__}: {e}") from e
        if answer.will_close:
            conn.close()
        elif conn.sock is not None:
            conn.sock.settimeout(self.timeout)
        return answer.status, answer.getheaders(), content

    def _take(self) -> http.client.HTTPConnection:
        """An idle connection still open, else a new (not yet connected) one."""
        while True:
            with self._lock:
                kept = self._idle.pop() if self._idle else None
            if kept is None:
                return OneSend(self.host, self.port, timeout=self.timeout)
            conn, since = kept
            fresh = time.monotonic() - since < IDLE_FOR
            if fresh and conn.sock is not None and not closed_by_peer(conn.sock):
                return conn
            conn.close()

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        if conn.sock is None:
            return
        with self._lock:
            if not self._closed and len(self._idle) < 16:
                self._idle.append((conn, time.monotonic()))
                return
        conn.close()


class OneSend(http.client.HTTPConnection):
    """An ``http.client`` connection writing the head and a bytes body in one
    send: ``http.client`` sends them apart, and a server that reads the head
    first is woken again for the body."""

    def _send_output(self, message_body: Any = None, encode_chunked: bool = False) -> None:
        if not isinstance(message_body, bytes) or encode_chunked:
            super()._send_output(message_body, encode_chunked)
            return
        self._buffer.extend((b"", b""))  # type: ignore[attr-defined]
        head = b"\r\n".join(self._buffer)  # type: ignore[attr-defined]
        del self._buffer[:]  # type: ignore[attr-defined]
        self.send(head + message_body)


def closed_by_peer(sock: socket.socket) -> bool:
    """An idle kept-alive socket with something to read was closed (or broken) by the server."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)
