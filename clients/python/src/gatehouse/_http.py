"""What the sync and async clients share: the retry rule, turning responses
into values or exceptions, and reading Server-Sent Events.

A call is described once as a :class:`Call` (method, path, body, whether a
retry is safe, how to read the answer); the two clients only differ in how
they send it.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx

from .errors import (
    Cancelled,
    ConnectionFailed,
    Expired,
    GatehouseError,
    Rejected,
    Released,
    ServerError,
    error_for_status,
)
from .models import Decision, Event, Gate

T = TypeVar("T")

API_PREFIX = "/api/hitl"

#: Statuses that say the server did not act on the request: always safe to retry.
NOT_PROCESSED = frozenset({429, 503})
#: Statuses a gateway may send after the server acted: retried only when the call is idempotent.
GATEWAY = frozenset({502, 504})


def new_key() -> str:
    """A fresh idempotency key."""
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Retry:
    """Exponential backoff with jitter for transient failures.

    ``attempts`` counts the first try. A call is retried after a connection
    that could not be made, a 429 or a 503 (the server did nothing); and,
    when the call is idempotent (reads, puts, deletes, and every call that
    opens a gate, which carries an idempotency key), also after a broken
    connection, a read timeout, a 502 or a 504.
    """

    attempts: int = 6
    backoff: float = 0.2
    max_backoff: float = 10.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to sleep before try number ``attempt + 1`` (``attempt`` from 1)."""
        if retry_after is not None:
            return min(retry_after, self.max_backoff)
        step = min(self.max_backoff, self.backoff * 2.0 ** (attempt - 1))
        return step * random.uniform(0.5, 1.0)


@dataclass
class Call(Generic[T]):
    """One API call, independent of how it is sent."""

    method: str
    path: str
    parse: Callable[[Any], T]
    body: Any = None
    params: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    idempotent: bool = False
    """Safe to repeat after a response was lost (reads, keyed gate opens)."""
    read_timeout: float | None = None
    """Overrides the client's read timeout (long polls hold the answer)."""

    def request_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"headers": self.headers}
        if self.body is not None:
            kwargs["json"] = self.body
        if self.params:
            kwargs["params"] = {k: v for k, v in self.params.items() if v is not None}
        return kwargs


def should_retry_exception(call: Call[Any], exc: httpx.TransportError) -> bool:
    """Whether a transport failure may be retried for this call."""
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)):
        return True  # the request never reached the server
    return call.idempotent


def should_retry_status(call: Call[Any], status: int) -> bool:
    return status in NOT_PROCESSED or (call.idempotent and status in GATEWAY)


def retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def read_response(call: Call[T], response: httpx.Response) -> T:
    """The call's value, or the exception its error response means."""
    try:
        body: Any = response.json() if response.content else None
    except ValueError:
        body = response.text
    if response.is_success:
        if isinstance(body, str) and "html" in response.headers.get("content-type", ""):
            raise GatehouseError(wrong_url_hint(call, response, "a web page, not the API"), status=response.status_code)
        return call.parse(body)
    error = error_for_status(response.status_code, body, f"{call.method} {call.path}: HTTP {response.status_code}")
    if response.status_code == 405 or (response.status_code == 404 and not isinstance(body, dict)):
        error.message = wrong_url_hint(call, response, error.message)
        error.args = (error.message,)
    raise error


def wrong_url_hint(call: Call[Any], response: httpx.Response, what: str) -> str:
    """An answer no Gatehouse API route gives: name the URL asked and what to check."""
    return (
        f"{call.method} {response.request.url}: HTTP {response.status_code} ({what}). Is the base URL right? "
        f"It should be the Gatehouse server's address (like http://127.0.0.1:7777): the client adds {API_PREFIX} "
        "itself. A URL pointing at the reviewer UI, or at a proxy path that does not lead to the server's "
        f"{API_PREFIX}, answers like this."
    )


def gave_up(call: Call[Any], last: BaseException | httpx.Response, attempts: int) -> GatehouseError:
    """The exception after the last try failed transiently."""
    where = f"{call.method} {call.path}"
    if isinstance(last, httpx.Response):
        error = read_error(call, last)
        error.message = f"{error.message} (after {attempts} tries)"
        error.args = (error.message,)
        return error
    return ConnectionFailed(f"{where}: {type(last).__name__}: {last} (after {attempts} tries)")


def read_error(call: Call[Any], response: httpx.Response) -> GatehouseError:
    try:
        read_response(call, response)
    except GatehouseError as e:
        return e
    return ServerError(f"{call.method} {call.path}: HTTP {response.status_code}", status=response.status_code)


def quote(segment: str) -> str:
    """A path segment, percent-encoded."""
    from urllib.parse import quote as q

    return q(str(segment), safe="")


class SseParser:
    """Turns lines of a ``text/event-stream`` into :class:`Event` values.

    Comments (keep-alives) are skipped; a message without an ``id`` (never
    sent by Gatehouse) is skipped too, since it could not be resumed after.
    """

    def __init__(self) -> None:
        self._id: str | None = None
        self._type = "message"
        self._data: list[str] = []

    def feed(self, line: str) -> Event | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "id":
            self._id = value
        elif name == "event":
            self._type = value
        elif name == "data":
            self._data.append(value)
        return None

    def _dispatch(self) -> Event | None:
        event_id, kind, data = self._id, self._type, "\n".join(self._data)
        self._id, self._type, self._data = None, "message", []
        if event_id is None or not event_id.isdigit() or not data:
            return None
        try:
            parsed = json.loads(data)
        except ValueError:
            parsed = {"raw": data}
        return Event(id=int(event_id), type=kind, data=parsed)


def parse_events(lines: Iterable[str]) -> Iterable[Event]:
    parser = SseParser()
    for line in lines:
        event = parser.feed(line)
        if event is not None:
            yield event


def settle_closed(gate: Gate) -> Decision:
    """The decision of a closed gate; :class:`Expired` or :class:`Cancelled` when it has none,
    :class:`Released` for a gate a reviewer released undecided (never a go-ahead)."""
    if gate.pending and gate.released is not None:
        by = gate.released.get("by", "a reviewer")
        raise Released(f"gate {gate.id} was released by {by}: the run goes on without it; nothing was decided", gate)
    if gate.status == "expired":
        raise Expired(f"gate {gate.id} expired unanswered ({gate.status_reason or 'no reason given'})", gate)
    if gate.status == "cancelled":
        raise Cancelled(f"gate {gate.id} was cancelled ({gate.status_reason or 'no reason given'})", gate)
    if gate.decision is None:
        raise GatehouseError(f"gate {gate.id} is {gate.status} without a decision")
    return gate.decision


def raise_if_withdrawn(gates: Iterable[Gate]) -> None:
    """Raises what the first of ``gates`` to have closed undecided means
    (:class:`Cancelled`, :class:`Expired`); returns when none has.

    An adapter that opens several gates one after another calls it with the
    gates it opened, read again, when a later open is refused with
    :class:`Conflict`: a reviewer who saw the first gate may have ended the
    run, which withdrew the gates already open, and that (not the refusal
    of the next one) is what the agent should hear.
    """
    for gate in gates:
        if gate.status in ("cancelled", "expired"):
            settle_closed(gate)


def settle(gate: Gate) -> Decision:
    """The decision of a closed gate that lets the agent go ahead, else the exception.

    A rejection raises :class:`Rejected`; an expired or cancelled gate
    raises :class:`Expired` or :class:`Cancelled`; a released one :class:`Released`. Every other decision
    (approve, edit, respond, defer, needs_revision, retry) is returned for
    the caller to act on.
    """
    decision = settle_closed(gate)
    if decision.action == "reject":
        reason = f": {decision.text}" if decision.text else ""
        raise Rejected(f"gate {gate.id} was rejected by {decision.decided_by}{reason}", gate, decision)
    return decision
