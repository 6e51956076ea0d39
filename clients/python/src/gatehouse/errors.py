"""The exceptions the client raises.

Every one is a :class:`GatehouseError` carrying the server's own message
(its error bodies are ``{code, message}``, with ``field`` naming the
offending field or parameter where there is one), so ``str(error)`` says
what went wrong and what to do. Branch on the class and ``field``, never on
the text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .models import Decision, Gate


class GatehouseError(Exception):
    """Base class: the server's message, its HTTP status and error code, and the offending field if any."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.body = body
        self.field: str | None = body.get("field") if isinstance(body, dict) else None


class AuthError(GatehouseError):
    """401: no token or an unknown or revoked one; 403: the token's role may not do this."""


class NotFound(GatehouseError):
    """404: no such run, gate, context key or token."""


class Conflict(GatehouseError):
    """409: someone decided first, or the run's state forbids the change.

    For a gate decided first by someone else, ``resolved_by`` and
    ``resolved_at`` name who and when.
    """

    def __init__(self, message: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        body = kwargs.get("body")
        self.resolved_by: str | None = body.get("resolved_by") if isinstance(body, dict) else None
        self.resolved_at: str | None = body.get("resolved_at") if isinstance(body, dict) else None


class InvalidRequest(GatehouseError):
    """422 (a field breaks a rule; the message names it) or 413 (the body is too large)."""


class ServerError(GatehouseError):
    """5xx that retries did not get past."""


class ConnectionFailed(GatehouseError):
    """The server could not be reached, or the connection broke, and retries did not help."""


class GateOutcome(GatehouseError):
    """A gate closed without letting the agent go ahead; ``gate`` is the gate as it closed."""

    def __init__(self, message: str, gate: Gate) -> None:
        super().__init__(message)
        self.gate = gate


class Rejected(GateOutcome):
    """The reviewer rejected (or asked for a revision where the caller needs a go-ahead).

    ``reason`` is the reviewer's text, ``decision`` the recorded decision.
    """

    def __init__(self, message: str, gate: Gate, decision: Decision) -> None:
        super().__init__(message, gate)
        self.decision = decision
        self.reason: str | None = decision.text


class Expired(GateOutcome):
    """Nobody decided before the gate's expiry."""


class Cancelled(GateOutcome):
    """The gate was withdrawn (its run ended, failed or was cancelled)."""


class Released(GateOutcome):
    """A reviewer released the gate: its run went on without waiting for it.

    Nothing was decided, and nothing proposed was approved. The gate is
    still open (``gate.pending``, ``gate.released`` says who and when) and
    may be decided later: ``wait(gate, through_release=True)`` waits for that.
    """


class Timeout(GatehouseError, TimeoutError):
    """The caller's own wait ran out while the gate was still pending.

    The gate stays open: wait again with ``gate_id``, or leave it.
    """

    def __init__(self, message: str, gate_id: str) -> None:
        super().__init__(message)
        self.gate_id = gate_id


def error_for_status(status: int, body: Any, fallback: str) -> GatehouseError:
    """The exception for an HTTP error response (``body`` parsed JSON, or text)."""
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        message, code = body["message"], body.get("code")
    else:
        message, code = (body if isinstance(body, str) and body else fallback), None
    kwargs: dict[str, Any] = {"status": status, "code": code, "body": body}
    if status in (401, 403):
        return AuthError(message, **kwargs)
    if status == 404:
        return NotFound(message, **kwargs)
    if status == 409:
        return Conflict(message, **kwargs)
    if status in (400, 413, 422):
        return InvalidRequest(message, **kwargs)
    if status >= 500:
        return ServerError(message, **kwargs)
    return GatehouseError(message, **kwargs)
