"""The blocking client: :class:`Client`.

Example::

    from gatehouse import Client

    with Client("http://127.0.0.1:7777", token="...") as gh:
        run = gh.start_run({"prompt": "ship it"}, title="deploy")
        decision = gh.request_approval(run, "deploy build 42", context={"env": "prod"})
        print(decision.action, decision.payload)   # raises Rejected if the reviewer said no

Every method is one API call (waits are long polls repeated until the gate
closes). Transient failures are retried per :class:`~gatehouse.Retry`;
calls that open gates carry idempotency keys, so a retry never opens a
second gate.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import httpx

from . import _calls as calls
from ._http import (
    API_PREFIX,
    Call,
    Retry,
    gave_up,
    parse_events,
    read_response,
    retry_after,
    settle,
    should_retry_exception,
    should_retry_status,
)
from ._wire import Wire
from ._wire import usable as wire_usable
from .errors import ConnectionFailed, Timeout, error_for_status
from .models import JSON, Decision, Event, Gate

if TYPE_CHECKING:
    from typing_extensions import Unpack

T = TypeVar("T")

DEFAULT_URL = "http://127.0.0.1:7777"
#: Seconds one long poll holds (the server allows up to 60).
POLL_SECONDS = 50.0


def resolve_settings(url: str | None, token: str | None) -> tuple[str, str | None]:
    """The server's base URL and token: arguments, else ``GATEHOUSE_URL`` and ``GATEHOUSE_TOKEN``."""
    base = (url or os.environ.get("GATEHOUSE_URL") or DEFAULT_URL).rstrip("/")
    if base.endswith(API_PREFIX):
        base = base[: -len(API_PREFIX)]
    return base, token or os.environ.get("GATEHOUSE_TOKEN")


class Client:
    """A blocking Gatehouse client for agents (and scripted reviewers).

    ``url`` and ``token`` default to ``GATEHOUSE_URL`` (else
    ``http://127.0.0.1:7777``) and ``GATEHOUSE_TOKEN``.
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        retry: Retry | None = None,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
    ) -> None:
        self.url, self.token = resolve_settings(url, token)
        self.retry = retry or Retry()
        self.timeout = timeout
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        self._http = http or httpx.Client(base_url=self.url + API_PREFIX, headers=headers, timeout=timeout)
        # Plain http:// calls take the lean path unless the caller brought its own httpx client.
        self._wire = Wire(self.url + API_PREFIX, headers, timeout) if http is None and wire_usable(self.url) else None

    def close(self) -> None:
        if self._wire is not None:
            self._wire.close()
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # The one place requests are sent -------------------------------------

    def send(self, call: Call[T]) -> T:
        """Sends ``call``, retrying transient failures per ``self.retry``."""
        last: BaseException | httpx.Response | None = None
        for attempt in range(1, self.retry.attempts + 1):
            try:
                response = self._request(call)
            except httpx.TransportError as e:
                if not should_retry_exception(call, e):
                    raise ConnectionFailed(f"{call.method} {call.path}: {type(e).__name__}: {e}") from e
                last, wait = e, self.retry.delay(attempt)
            else:
                if not should_retry_status(call, response.status_code):
                    return read_response(call, response)
                last, wait = response, self.retry.delay(attempt, retry_after(response))
            if attempt < self.retry.attempts:
                time.sleep(wait)
        assert last is not None
        raise gave_up(call, last, self.retry.attempts)

    def _request(self, call: Call[Any]) -> httpx.Response:
        """One try of ``call``: over the lean path where it applies, else through httpx."""
        if self._wire is not None:
            return self._wire.request(
                call.method,
                call.path,
                body=call.body,
                params=call.params and {k: v for k, v in call.params.items() if v is not None},
                headers=call.headers,
                read_timeout=call.read_timeout,
            )
        timeout = httpx.Timeout(self.timeout, read=call.read_timeout or self.timeout)
        return self._http.request(call.method, call.path, timeout=timeout, **call.request_kwargs())

    # Runs -----------------------------------------------------------------

    def start_run(self, run_input: JSON = None, **options: Unpack[calls.RunOptions]) -> str:
        """Starts a run (``POST /run``) and returns its id."""
        return self.send(calls.start_run(run_input, options))

    def run_status(self, run_id: str) -> dict[str, Any]:
        """Status, progress, current step and pending actions of a run."""
        return self.send(calls.run_status(run_id))

    def run_state(self, run_id: str) -> dict[str, Any]:
        """A run's full state: run, turns, gates (with decisions), context and plan."""
        return self.send(calls.run_state(run_id))

    def active_runs(
        self, *, session_id: str | None = None, user_id: str | None = None, status: str | None = None
    ) -> list[dict[str, Any]]:
        """Live runs (created, active, awaiting a human, paused) the token may see, newest first."""
        return self.send(calls.active_runs(session_id, user_id, status))

    def complete_run(self, run_id: str, result: JSON = None) -> dict[str, Any]:
        """Completes an active run with an optional result."""
        return self.send(calls.complete_run(run_id, result))

    def begin_run(self, run_id: str) -> dict[str, Any]:
        """Starts a run created with ``start=False`` (``POST /run/{id}/start``); returns the run."""
        return self.send(calls.begin_run(run_id))

    def retry_run(self, run_id: str) -> dict[str, Any]:
        """Tries a failed or cancelled run again from its last good step (reviewer tokens only); returns the run."""
        return self.send(calls.retry_run(run_id))

    def fail_run(self, run_id: str, reason: str) -> dict[str, Any]:
        """Fails a live run; its pending gates are withdrawn."""
        return self.send(calls.fail_run(run_id, reason))

    def add_turn(
        self,
        run_id: str,
        content: str,
        *,
        role: str = "agent",
        actor: str | None = None,
        score: float | None = None,
        metadata: JSON = None,
        wait: float = 30.0,
    ) -> dict[str, Any]:
        """Records a turn and returns ``{"turn": ..., "directive": ...}``.

        The directive's ``action`` is ``continue``, ``paused`` (held up to
        ``wait`` seconds first), ``cancelled`` or ``finished``; reviewer
        instructions arrive in it once.
        """
        return self.send(calls.add_turn(run_id, content, role, actor, score, metadata, wait))

    def directive(self, run_id: str, *, wait: float = 30.0) -> dict[str, Any]:
        """The run's directive, held up to ``wait`` seconds while the run is paused."""
        return self.send(calls.directive(run_id, wait))

    def run_events(self, run_id: str, *, after: int = 0, limit: int = 500) -> dict[str, Any]:
        """A page of a run's event log as JSON: ``{"events": [...], "next_after": N}``."""
        return self.send(calls.run_events(run_id, after, limit))

    # Gates ----------------------------------------------------------------

    def open_gate(
        self, run_id: str, kind: str, text: str, *, wait: float = 0.0, **options: Unpack[calls.GateOptions]
    ) -> Gate:
        """Opens a gate of any kind and returns it at once (pending, or passed by policy),
        or, with ``wait`` (seconds, at most 60), once it is decided or the wait passes:
        open and wait in one request. A gate still pending after the wait comes back pending.

        Kind-specific fields go in ``spec``, e.g.
        ``open_gate(run, "response_review", "Check", spec={"raw": r, "audited": a})``.
        """
        return self.send(calls.open_gate(run_id, kind, text, options, wait))

    def reach_node(self, run_id: str, node_id: str, *, payload: Any = None, text: str | None = None) -> Gate:
        """The run reached ``node_id`` of its workflow: opens the gate the run declared
        there (``declared_gates`` when it started), with its declared rubric and score."""
        body: dict[str, Any] = {}
        if payload is not None:
            body["payload"] = payload
        if text is not None:
            body["text"] = text
        return self.send(calls.reach_node(run_id, node_id, body))

    def gate(self, gate_id: str) -> Gate:
        """A gate as it is now."""
        return self.send(calls.get_gate(gate_id))

    def list_gates(self, **filters: Any) -> dict[str, Any]:
        """The queue: ``status`` (pending by default, or resolved, expired, cancelled, all),
        ``kind``, ``mode``, ``run_id``, ``agent``, ``limit``, ``offset``. Agents see only their own."""
        return self.send(calls.list_gates(filters))

    def wait(
        self, gate: Gate | str, *, timeout: float | None = None, through_release: bool = False
    ) -> Gate:
        """Blocks until the gate closes and returns it; :class:`Timeout` after ``timeout`` seconds.

        A gate a reviewer released (its run went on without it) is returned at
        once, still pending with ``released`` set; ``through_release=True``
        waits on for its decision instead.
        """
        gate_id = gate.id if isinstance(gate, Gate) else gate
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = POLL_SECONDS if deadline is None else max(0.0, min(POLL_SECONDS, deadline - time.monotonic()))
            current = self.send(calls.wait_gate(gate_id, round(left, 3), through_release))
            if not current.pending or (current.released is not None and not through_release):
                return current
            if deadline is not None and time.monotonic() >= deadline:
                raise Timeout(f"gate {gate_id} is still pending after {timeout} s", gate_id)

    def wait_for_decision(self, gate: Gate | str, *, timeout: float | None = None) -> Decision:
        """Waits, then returns the decision; raises :class:`Rejected`, :class:`Expired`,
        :class:`Cancelled`, :class:`Released` (a reviewer let the run go on undecided) or :class:`Timeout`."""
        return settle(self.wait(gate, timeout=timeout))

    def resolve_gate(
        self,
        gate_id: str,
        action: str,
        *,
        payload: JSON = None,
        text: str | None = None,
        actions: list[dict[str, Any]] | None = None,
        response: JSON = None,
    ) -> Gate:
        """Decides a gate (reviewer tokens only). :class:`Conflict` names who decided first.

        For a gate proposing several actions, ``actions`` decides some of them
        (``{"id", "action", "args", "name", "text"}``); a bare approve or reject
        decides every action still open.
        """
        return self.send(calls.resolve_gate(gate_id, action, payload, text, actions, response))

    def score_gate(
        self, gate_id: str, score: float, *, rubric_scores: dict[str, float] | None = None, justification: str = ""
    ) -> dict[str, Any]:
        """Scores a quality gate's deliverable (1 to 5): ``{"gate": ..., "verdict": ...}``."""
        return self.send(calls.score_gate(gate_id, score, rubric_scores, justification))

    # The three HITL tools -------------------------------------------------

    @overload
    def request_approval(
        self,
        run_id: str,
        action: str,
        context: JSON = ...,
        *,
        text: str | None = ...,
        block: Literal[True] = ...,
        timeout: float | None = ...,
        **options: Unpack[calls.ToolOptions],
    ) -> Decision: ...
    @overload
    def request_approval(
        self,
        run_id: str,
        action: str,
        context: JSON = ...,
        *,
        text: str | None = ...,
        block: Literal[False],
        timeout: float | None = ...,
        **options: Unpack[calls.ToolOptions],
    ) -> Gate: ...
    def request_approval(
        self,
        run_id: str,
        action: str,
        context: JSON = None,
        *,
        text: str | None = None,
        block: bool = True,
        timeout: float | None = None,
        **options: Unpack[calls.ToolOptions],
    ) -> Decision | Gate:
        """Asks a human to approve ``action``; ``context`` becomes the editable payload.

        Blocks for the decision (``block=False`` returns the pending gate):
        approve or edit return the :class:`Decision` (an edit's payload in
        ``decision.payload``); a rejection raises :class:`Rejected`.
        """
        gate = self.send(calls.request_approval(run_id, action, context, text, options))
        return self.wait_for_decision(gate, timeout=timeout) if block else gate

    @overload
    def escalate_to_human(
        self,
        run_id: str,
        issue: str,
        *,
        required_expertise: list[str] | None = ...,
        context: JSON = ...,
        block: Literal[True] = ...,
        timeout: float | None = ...,
        **options: Unpack[calls.ToolOptions],
    ) -> Decision: ...
    @overload
    def escalate_to_human(
        self,
        run_id: str,
        issue: str,
        *,
        required_expertise: list[str] | None = ...,
        context: JSON = ...,
        block: Literal[False],
        timeout: float | None = ...,
        **options: Unpack[calls.ToolOptions],
    ) -> Gate: ...
    def escalate_to_human(
        self,
        run_id: str,
        issue: str,
        *,
        required_expertise: list[str] | None = None,
        context: JSON = None,
        block: bool = True,
        timeout: float | None = None,
        **options: Unpack[calls.ToolOptions],
    ) -> Decision | Gate:
        """Escalates an issue to a human (a question); the answer is ``decision.text``."""
        gate = self.send(calls.escalate_to_human(run_id, issue, list(required_expertise or []), context, options))
        return self.wait_for_decision(gate, timeout=timeout) if block else gate

    @overload
    def request_feedback(
        self,
        run_id: str,
        artifact: str,
        questions: list[str] | None = ...,
        *,
        block: Literal[False] = ...,
        timeout: float | None = ...,
        **options: Unpack[calls.ToolOptions],
    ) -> Gate: ...
    @overload
    def request_feedback(
        self,
        run_id: str,
        artifact: str,
        questions: list[str] | None = ...,
        *,
        block: Literal[True],
        timeout: float | None = ...,
        **options: Unpack[calls.ToolOptions],
    ) -> Decision: ...
    def request_feedback(
        self,
        run_id: str,
        artifact: str,
        questions: list[str] | None = None,
        *,
        block: bool = False,
        timeout: float | None = None,
        **options: Unpack[calls.ToolOptions],
    ) -> Decision | Gate:
        """Asks for feedback on an artifact. Asynchronous by default (the run carries on):
        returns the pending gate; collect the answer later with :meth:`wait_for_decision`."""
        gate = self.send(calls.request_feedback(run_id, artifact, list(questions or []), options))
        return self.wait_for_decision(gate, timeout=timeout) if block else gate

    # Plan and context ------------------------------------------------------

    def plan(self, run_id: str) -> dict[str, Any]:
        """The run's plan: ``{"plan": newest revision or None, "revisions": [...], "progress": ...}``."""
        return self.send(calls.read_plan(run_id))

    def change_plan(self, run_id: str, op: str, **fields: Any) -> dict[str, Any]:
        """Applies one plan operation and returns the new revision.

        ``op`` is add_task, update_task, assign_task, estimate_duration,
        set_dependencies or replace, e.g.
        ``change_plan(run, "add_task", task_id="build", description="Build it")``.
        """
        return self.send(calls.change_plan(run_id, {"op": op, **fields}))

    def context(self, run_id: str) -> dict[str, Any]:
        """The run's shared context (key to JSON value)."""
        return self.send(calls.read_context(run_id))

    def context_history(self, run_id: str) -> list[dict[str, Any]]:
        """Every set and delete of the run's context, oldest first."""
        return self.send(calls.context_history(run_id))

    def set_context(self, run_id: str, key: str, value: JSON) -> dict[str, Any]:
        """Sets a context key: ``{"key", "old", "new"}``."""
        return self.send(calls.set_context(run_id, key, value))

    def delete_context(self, run_id: str, key: str) -> dict[str, Any]:
        """Deletes a context key; :class:`NotFound` when there is none."""
        return self.send(calls.delete_context(run_id, key))

    # Events ----------------------------------------------------------------

    def events(
        self,
        run_id: str | None = None,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        after: int | None = None,
        reconnect: bool = True,
    ) -> Iterator[Event]:
        """Follows the event log (SSE) from after sequence number ``after`` (default: the start).

        When the connection drops, it reconnects with ``Last-Event-ID``, so
        no event is missed or repeated. Agent tokens must name a ``run_id``.
        Stop by breaking out of the loop.
        """
        last, failures = after, 0
        params = calls.events_params(run_id, session_id, user_id, after)
        while True:
            headers = {"Accept": "text/event-stream"}
            if last is not None:
                headers["Last-Event-ID"] = str(last)
            try:
                timeout = httpx.Timeout(self.timeout, read=60.0)  # the server sends a keep-alive every 15 s
                with self._http.stream(
                    "GET", "/events", params={k: v for k, v in params.items() if v is not None},
                    headers=headers, timeout=timeout,
                ) as response:
                    if not response.is_success:
                        response.read()
                        status = response.status_code
                        if status not in (429, 502, 503, 504) or not reconnect:
                            raise error_for_status(status, _body(response), f"GET /events: HTTP {status}")
                    else:
                        for event in parse_events(response.iter_lines()):
                            failures = 0
                            last = event.id
                            yield event
            except httpx.TransportError as e:
                if not reconnect or failures + 1 >= self.retry.attempts:
                    raise ConnectionFailed(f"GET /events: {type(e).__name__}: {e}") from e
            if not reconnect:
                return
            failures += 1
            if failures >= self.retry.attempts:
                raise ConnectionFailed(f"GET /events: the stream kept failing ({failures} tries)")
            time.sleep(self.retry.delay(failures))


def _body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text
