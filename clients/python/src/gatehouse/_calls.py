"""Every agent-side call of the API under ``/api/hitl``, described once.

Each function returns a :class:`~gatehouse._http.Call`; :class:`~gatehouse.Client`
and :class:`~gatehouse.AsyncClient` send it. Calls that open a gate always
carry an idempotency key (a fresh one unless the caller names one), so the
retry rule may repeat them without ever opening a second gate.
"""

from __future__ import annotations

from typing import Any, TypedDict

from ._http import Call, new_key, quote
from .models import JSON, Gate


class RunOptions(TypedDict, total=False):
    """Optional fields of a new run (``POST /run``)."""

    title: str
    session_id: str
    user_id: str
    agent: str
    hitl_config: dict[str, Any]
    protocol: dict[str, Any]
    step_mode: str
    breakpoints: list[dict[str, Any]]
    participants: list[dict[str, Any]]
    parent_run_id: str
    start: bool
    """``False`` creates the run without starting it: it stays ``created`` until :func:`begin_run`."""
    expires_at: str
    """When the run expires (RFC 3339): the server then cancels it and its pending gates expire."""
    expires_in_secs: int
    """Seconds from now until the run expires (1 to a year); at most one of this and ``expires_at``."""
    declared_gates: list[dict[str, Any]]
    """Gates declared up front, each ``{workflow_node_id, kind, text, rubric,
    required_score, requires_human, mode}``: reaching the node (``reach_node``)
    opens it as declared; the agent may raise the score, never lower it."""


class GateOptions(TypedDict, total=False):
    """Optional fields of a new gate (``POST /runs/{id}/gates``)."""

    spec: dict[str, Any]
    """Kind-specific fields: ``action`` (approval), ``raw``/``audited`` (response_review),
    ``goal``/``round`` (goal_review), ``rubric``/``required_score`` (quality_score)..."""
    payload: JSON
    example_input: JSON
    mode: str
    priority: str
    agent: str
    context: dict[str, Any]
    allowed_actions: list[str]
    requires_human: bool
    confidence: float
    safety_flags: list[str]
    quorum: dict[str, Any]
    expires_in: int
    """Seconds until the gate expires unanswered."""
    on_timeout: str
    """What happens then: ``expire`` (default), ``reject``, ``approve`` (not
    for ``requires_human`` gates or require-human runs), ``escalate`` (once,
    to urgent, for one more window) or ``fail`` (the run)."""
    options: list[dict[str, Any]]
    """Preset answers or rejections (``{name, title, description, action, text}``),
    one key each for the reviewer; the decision names the one chosen."""
    actions: list[dict[str, Any]]
    """Several proposed actions (approval gates), each ``{id, name, args,
    description, allowed_actions}`` and decided on its own."""
    response_schema: dict[str, Any]
    """The JSON Schema (an object) of the answer wanted: the reviewer fills it
    as a form, and the decision's ``response`` holds the checked answer."""
    payload_schema: dict[str, Any]
    """What the payload must look like (a JSON Schema, such as the tool's input
    schema): a payload that breaks it cannot be approved as is, and an edit
    that breaks it is refused (422, naming the field)."""
    agent_state: JSON
    """Opaque state (at most 64 KiB of JSON) returned with the gate and its
    decision, so a stateless agent can pick up where it stopped."""
    workflow_node_id: str
    """The workflow node the gate belongs to: a gate the run declared there applies."""
    idempotency_key: str


class ToolOptions(TypedDict, total=False):
    """Options the three HITL tools share."""

    urgency: str
    """low, normal, high or urgent."""
    expires_in: int
    """Seconds until the gate expires unanswered."""
    mode: str
    """sync, async or advisory."""
    task: dict[str, Any]
    """``{task_id, task_description, step}``."""
    idempotency_key: str


def _json(body: Any) -> Any:
    return body


def _gate(body: Any) -> Gate:
    return Gate.from_json(body["gate"] if "gate" in body and "id" not in body else body)


def _path(*parts: str) -> str:
    return "/" + "/".join(parts)


# Runs -----------------------------------------------------------------------


def start_run(run_input: JSON, options: RunOptions) -> Call[str]:
    body: dict[str, Any] = {"run_input": run_input if run_input is not None else {}}
    body.update(options)
    return Call("POST", "/run", lambda b: str(b["run_id"]), body=body)


def run_status(run_id: str) -> Call[dict[str, Any]]:
    return Call("GET", _path("run", quote(run_id), "status"), _json, idempotent=True)


def run_state(run_id: str) -> Call[dict[str, Any]]:
    return Call("GET", _path("run", quote(run_id), "state"), _json, idempotent=True)


def active_runs(session_id: str | None, user_id: str | None, status: str | None) -> Call[list[dict[str, Any]]]:
    params = {"session_id": session_id, "user_id": user_id, "status": status, "limit": 500}
    return Call("GET", "/runs/active", lambda b: list(b["runs"]), params=params, idempotent=True)


def complete_run(run_id: str, result: JSON) -> Call[dict[str, Any]]:
    return Call("POST", _path("runs", quote(run_id), "complete"), _json, body={"result": result})


def begin_run(run_id: str) -> Call[dict[str, Any]]:
    return Call("POST", _path("run", quote(run_id), "start"), _json)


def retry_run(run_id: str) -> Call[dict[str, Any]]:
    return Call("POST", _path("run", quote(run_id), "retry"), _json)


def fail_run(run_id: str, reason: str) -> Call[dict[str, Any]]:
    return Call("POST", _path("runs", quote(run_id), "fail"), _json, body={"reason": reason})


def add_turn(
    run_id: str,
    content: str,
    role: str,
    actor: str | None,
    score: float | None,
    metadata: JSON,
    wait: float,
) -> Call[dict[str, Any]]:
    body: dict[str, Any] = {"role": role, "content": content}
    if actor is not None:
        body["actor"] = actor
    if score is not None:
        body["score"] = score
    if metadata is not None:
        body["metadata"] = metadata
    path = _path("runs", quote(run_id), "turns")
    return Call("POST", path, _json, body=body, params={"wait": wait}, read_timeout=wait + 30)


def directive(run_id: str, wait: float) -> Call[dict[str, Any]]:
    path = _path("runs", quote(run_id), "directive")
    return Call("GET", path, _json, params={"wait": wait}, idempotent=True, read_timeout=wait + 30)


def run_events(run_id: str, after: int, limit: int) -> Call[dict[str, Any]]:
    path = _path("runs", quote(run_id), "events")
    return Call("GET", path, _json, params={"after": after, "limit": limit}, idempotent=True)


# Gates ----------------------------------------------------------------------


def open_gate(run_id: str, kind: str, text: str, options: GateOptions, wait: float = 0.0) -> Call[Gate]:
    """Opens a gate; with ``wait`` (0 to 60 seconds) the server holds the
    answer until the gate is decided or the wait passes (open and wait in one
    request). A retry with the same key finds the same gate and waits again."""
    opts: dict[str, Any] = dict(options)
    key = str(opts.pop("idempotency_key", None) or new_key())
    body: dict[str, Any] = {"kind": kind, "text": text}
    body.update(opts.pop("spec", None) or {})
    if "expires_in" in opts:
        body["expires_in_secs"] = opts.pop("expires_in")
    body.update(opts)
    path = _path("runs", quote(run_id), "gates")
    headers = {"Idempotency-Key": key}
    if wait <= 0:
        return Call("POST", path, _gate, body=body, headers=headers, idempotent=True)
    params = {"wait": round(wait, 3)}
    return Call("POST", path, _gate, body=body, params=params, headers=headers, idempotent=True, read_timeout=wait + 30)


def get_gate(gate_id: str) -> Call[Gate]:
    return Call("GET", _path("gates", quote(gate_id)), _gate, idempotent=True)


def wait_gate(gate_id: str, seconds: float, through_release: bool = False) -> Call[Gate]:
    """A long poll: answers when the gate closes, or at once when a reviewer
    released it (unless ``through_release``), or when ``seconds`` pass."""
    path = _path("gates", quote(gate_id), "wait")
    params: dict[str, Any] = {"timeout": seconds}
    if through_release:
        params["through_release"] = "true"
    return Call("GET", path, _gate, params=params, idempotent=True, read_timeout=seconds + 30)


def reach_node(run_id: str, node_id: str, body: dict[str, Any]) -> Call[Gate]:
    """The run reached a workflow node: opens the gate the run declared there."""
    path = _path("run", quote(run_id), "nodes", quote(node_id))
    return Call("POST", path, _gate, body=body)


def list_gates(filters: dict[str, Any]) -> Call[dict[str, Any]]:
    return Call("GET", "/gates", _json, params=filters, idempotent=True)


def resolve_gate(
    gate_id: str,
    action: str,
    payload: JSON,
    text: str | None,
    actions: list[dict[str, Any]] | None,
    response: JSON = None,
) -> Call[Gate]:
    body: dict[str, Any] = {"action": action}
    if payload is not None:
        body["payload"] = payload
    if text is not None:
        body["text"] = text
    if actions:
        body["actions"] = actions
    if response is not None:
        body["response"] = response
    return Call("POST", _path("gates", quote(gate_id), "resolve"), _gate, body=body)


def score_gate(gate_id: str, score: float, rubric_scores: dict[str, float] | None, justification: str) -> Call[Any]:
    body = {"score": score, "rubric_scores": rubric_scores or {}, "justification": justification}
    return Call("POST", _path("gates", quote(gate_id), "score"), _json, body=body)


# The HITL tools -----------------------------------------------------------


def _tool(run_id: str, tool: str, body: dict[str, Any], options: ToolOptions) -> Call[Gate]:
    opts: dict[str, Any] = dict(options)
    key = str(opts.pop("idempotency_key", None) or new_key())
    if "expires_in" in opts:
        body["timeout"] = opts.pop("expires_in")
    body.update(opts)
    body["wait"] = 0  # answer at once; the client long-polls the gate itself
    path = _path("runs", quote(run_id), "tools", tool)
    return Call("POST", path, _gate, body=body, headers={"Idempotency-Key": key}, idempotent=True)


def request_approval(run_id: str, action: str, context: JSON, text: str | None, options: ToolOptions) -> Call[Gate]:
    body: dict[str, Any] = {"action": action, "context": context}
    if text is not None:
        body["text"] = text
    return _tool(run_id, "request_approval", body, options)


def escalate_to_human(
    run_id: str, issue: str, required_expertise: list[str], context: JSON, options: ToolOptions
) -> Call[Gate]:
    body = {"issue": issue, "required_expertise": required_expertise, "context": context}
    return _tool(run_id, "escalate_to_human", body, options)


def request_feedback(run_id: str, artifact: str, questions: list[str], options: ToolOptions) -> Call[Gate]:
    return _tool(run_id, "request_feedback", {"artifact": artifact, "questions": questions}, options)


# Plan and context -----------------------------------------------------------


def read_plan(run_id: str) -> Call[dict[str, Any]]:
    return Call("GET", _path("runs", quote(run_id), "plan"), _json, idempotent=True)


def change_plan(run_id: str, op: dict[str, Any]) -> Call[dict[str, Any]]:
    return Call("POST", _path("runs", quote(run_id), "plan"), _json, body=op)


def read_context(run_id: str) -> Call[dict[str, Any]]:
    return Call("GET", _path("runs", quote(run_id), "context"), _json, idempotent=True)


def context_history(run_id: str) -> Call[list[dict[str, Any]]]:
    return Call("GET", _path("runs", quote(run_id), "context", "history"), _json, idempotent=True)


def set_context(run_id: str, key: str, value: JSON) -> Call[dict[str, Any]]:
    path = _path("runs", quote(run_id), "context", quote(key))
    return Call("PUT", path, _json, body={"value": value}, idempotent=True)


def delete_context(run_id: str, key: str) -> Call[dict[str, Any]]:
    # Not marked idempotent: a repeat after a lost answer would be a 404.
    return Call("DELETE", _path("runs", quote(run_id), "context", quote(key)), _json)


def events_params(
    run_id: str | None, session_id: str | None, user_id: str | None, after: int | None
) -> dict[str, Any]:
    return {"run_id": run_id, "session_id": session_id, "user_id": user_id, "after": after}
