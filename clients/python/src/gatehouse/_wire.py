"""A lean HTTP/1.1 path for the blocking client's plain-``http://`` calls.

An agent's checkpoint is one request on a kept-alive loopback connection,
and ``httpx`` spends more time building and parsing that request than the
server spends answering a read (URL objects parsed several times a call,
headers and body written to the socket in two sends, so the server wakes
twice); the standard library's ``http.client`` still spent about 0.25 ms a
call more than the exchange itself (a buffered reader made for every
answer, its headers parsed as an e-mail message). :class:`Connection`
writes the request line, headers and body in one send and reads the answer
through one buffer kept with the connection: the status line, the headers,
and a body of ``Content-Length`` bytes, in chunks, or up to the close.

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

import json
import re
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
    """Kept-alive connections to one server, safe to share between threads."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout: float) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.headers = {"User-Agent": USER_AGENT, "Accept": "application/json", **headers}
        self.timeout = timeout
        self._idle: list[tuple[Connection, float]] = []
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
            status, head, content = conn.exchange(method, target, payload, all_headers, read_timeout or self.timeout)
        except BaseException:
            conn.close()
            raise
        self._give_back(conn)
        response = httpx.Response(status, headers=head, content=content)
        if not response.is_success:
            # Error answers name the URL asked (a wrong base URL, say): give them their request.
            response.request = httpx.Request(method, f"http://{self.host}:{self.port}{target}")
        return response

    def _take(self) -> Connection:
        """An idle connection still open, else a new (not yet connected) one."""
        while True:
            with self._lock:
                kept = self._idle.pop() if self._idle else None
            if kept is None:
                return Connection(self.host, self.port, self.timeout)
            conn, since = kept
            fresh = time.monotonic() - since < IDLE_FOR
            if fresh and conn.sock is not None and not closed_by_peer(conn.sock):
                return conn
            conn.close()

    def _give_back(self, conn: Connection) -> None:
        if conn.sock is None:
            return
        with self._lock:
            if not self._closed and len(self._idle) < 16:
                self._idle.append((conn, time.monotonic()))
                return
        conn.close()


UNSAFE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
"""Control characters no request line or header may hold (a tab may be in a header's value)."""

HEAD_LIMIT = 64 * 1024
"""The most an answer's status line and headers may take, in bytes."""

NO_BODY = frozenset({204, 304})
"""Statuses whose answer never has a body (and 1xx, and any answer to HEAD)."""


class Connection:
    """One kept-alive HTTP/1.1 connection: each request (line, headers and
    body) written in one send, each answer read through one buffer."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.host = host
        self.port = port
        self.timeout = timeout
        self.sock: socket.socket | None = None
        self._buffer = bytearray()
        self._host_header = host if port == 80 else f"{host}:{port}"
        if ":" in host:  # an IPv6 address
            self._host_header = f"[{host}]" if port == 80 else f"[{host}]:{port}"

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self._buffer.clear()

    def exchange(
        self, method: str, target: str, payload: bytes | None, headers: dict[str, str], read_timeout: float
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """Sends one request and reads its answer: the status, the headers and the body."""
        request = request_bytes(method, target, self._host_header, headers, payload)
        sock = self._connected()
        try:
            sock.sendall(request)
        except socket.timeout as e:
            raise httpx.WriteTimeout(f"{method} {target}: sending timed out") from e
        except OSError as e:
            raise httpx.WriteError(f"{method} {target}: {e}") from e
        sock.settimeout(read_timeout)
        try:
            status, head, content, keep = self._answer(method)
        except socket.timeout as e:
            raise httpx.ReadTimeout(f"{method} {target}: no answer in time") from e
        except OSError as e:
            raise httpx.ReadError(f"{method} {target}: {type(e).__name__}: {e}") from e
        except httpx.RemoteProtocolError as e:
            raise httpx.RemoteProtocolError(f"{method} {target}: {e}") from e
        if keep and not self._buffer:
            sock.settimeout(self.timeout)
        else:
            # The server closes it, or sent more than one answer: not used again.
            self.close()
        return status, head, content

    def _connected(self) -> socket.socket:
        if self.sock is not None:
            return self.sock
        try:
            sock = socket.create_connection((self.host, self.port), self.timeout)
        except socket.timeout as e:
            raise httpx.ConnectTimeout(f"connecting to {self.host}:{self.port} timed out") from e
        except OSError as e:
            raise httpx.ConnectError(f"cannot connect to {self.host}:{self.port}: {e}") from e
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        return sock

    def _answer(self, method: str) -> tuple[int, list[tuple[str, str]], bytes, bool]:
        """The answer's status, headers and body, and whether the connection stays open after it."""
        while True:
            version, status, head = self._head()
            if not 100 <= status < 200:
                break  # an interim answer (100 Continue) is followed by the real one
        fields = {name.lower(): value for name, value in head}
        tokens = {t.strip().lower() for t in fields.get("connection", "").split(",")}
        keep = "close" not in tokens and (version == "HTTP/1.1" or "keep-alive" in tokens)
        if method == "HEAD" or status in NO_BODY:
            return status, head, b"", keep
        if "chunked" in fields.get("transfer-encoding", "").lower():
            return status, head, self._chunked(), keep
        length = fields.get("content-length")
        if length is not None:
            if not length.strip().isdigit():
                raise httpx.RemoteProtocolError(f"the answer's Content-Length is not a length: {length!r}")
            return status, head, self._exactly(int(length)), keep
        # Neither: the body runs to the close.
        while self._fill():
            pass
        content = bytes(self._buffer)
        self._buffer.clear()
        return status, head, content, False

    def _head(self) -> tuple[str, int, list[tuple[str, str]]]:
        end = self._buffer.find(b"\r\n\r\n")
        while end < 0:
            if len(self._buffer) > HEAD_LIMIT:
                raise httpx.RemoteProtocolError(f"the answer's headers run past {HEAD_LIMIT} bytes")
            seen = len(self._buffer)
            if not self._fill():
                if seen == 0:
                    raise httpx.RemoteProtocolError("the server closed the connection without answering")
                raise httpx.RemoteProtocolError("the server closed the connection in the middle of its answer")
            end = self._buffer.find(b"\r\n\r\n", max(0, seen - 3))
        lines = bytes(self._buffer[:end]).decode("latin-1").split("\r\n")
        del self._buffer[: end + 4]
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit() or len(parts[1]) != 3:
            raise httpx.RemoteProtocolError(f"not an HTTP status line: {lines[0][:80]!r}")
        head: list[tuple[str, str]] = []
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip():
                raise httpx.RemoteProtocolError(f"not an HTTP header: {line[:80]!r}")
            head.append((name, value.strip()))
        return parts[0], int(parts[1]), head

    def _fill(self) -> bool:
        """Reads what has arrived into the buffer; False at the end of the stream."""
        assert self.sock is not None
        data = self.sock.recv(65536)
        self._buffer += data
        return bool(data)

    def _exactly(self, n: int) -> bytes:
        while len(self._buffer) < n:
            if not self._fill():
                raise httpx.RemoteProtocolError(f"the server closed the connection {n - len(self._buffer)} bytes short of the body")
        content = bytes(self._buffer[:n])
        del self._buffer[:n]
        return content

    def _line(self) -> bytes:
        end = self._buffer.find(b"\r\n")
        while end < 0:
            if len(self._buffer) > HEAD_LIMIT:
                raise httpx.RemoteProtocolError(f"a chunk's size line runs past {HEAD_LIMIT} bytes")
            if not self._fill():
                raise httpx.RemoteProtocolError("the server closed the connection in the middle of a chunked body")
            end = self._buffer.find(b"\r\n")
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 2]
        return line

    def _chunked(self) -> bytes:
        content = bytearray()
        while True:
            size_text = self._line().split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise httpx.RemoteProtocolError(f"not a chunk size: {size_text[:20]!r}") from None
            if size == 0:
                while self._line():  # trailers, up to the empty line
                    pass
                return bytes(content)
            content += self._exactly(size)
            if self._exactly(2) != b"\r\n":
                raise httpx.RemoteProtocolError("a chunk does not end where its size says")


def request_bytes(method: str, target: str, host: str, headers: dict[str, str], payload: bytes | None) -> bytes:
    """A request's line, headers and body, as one write. A line break or
    other control character where it could end a line is refused, as
    ``http.client`` refuses it: a header's value (an idempotency key, say)
    cannot add headers of its own."""
    if UNSAFE.search(target) or " " in target:
        raise ValueError(f"the request target cannot hold spaces or control characters: {target!r}")
    for name, value in headers.items():
        if UNSAFE.search(name) or UNSAFE.search(value) or ":" in name or not name:
            raise ValueError(f"the header {name!r} cannot be sent: a name or value holds a control character")
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if payload is not None:
        lines.append(f"Content-Length: {len(payload)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + payload if payload else head


def closed_by_peer(sock: socket.socket) -> bool:
    """An idle kept-alive socket with something to read was closed (or broken) by the server."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)
