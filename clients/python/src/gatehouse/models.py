"""What the server answers, as small immutable values.

Gates, decisions and events get typed classes because agents branch on
them; everything else (runs, turns, plans, context) comes back as the
server's JSON, described in its OpenAPI document at
``/api/hitl/openapi.json``. Each class keeps the full JSON in ``raw``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

JSON = Any
"""Any JSON value."""

GateKind = Literal[
    "approval",
    "payload_review",
    "question",
    "information_review",
    "response_review",
    "quality_score",
    "goal_review",
    "plan_review",
]
GateStatus = Literal["pending", "resolved", "expired", "cancelled"]
DecisionAction = Literal["approve", "edit", "reject", "respond", "needs_revision", "defer", "retry"]
BlockingMode = Literal["sync", "async", "advisory"]
Priority = Literal["low", "normal", "high", "urgent"]

#: Decisions that let the agent go ahead (with the possibly edited proposal).
PROCEED: frozenset[str] = frozenset({"approve", "edit", "respond", "defer"})


@dataclass(frozen=True)
class Decision:
    """A recorded decision on a gate."""

    id: str
    gate_id: str
    run_id: str
    action: str
    """approve, edit, reject, respond, needs_revision, defer or retry."""
    decided_by: str
    """The reviewer's token identity, ``policy`` or ``system``."""
    text: str | None
    """The answer, feedback or reason."""
    payload: JSON
    """The edited payload (for ``edit``), else ``None``."""
    decided_at: str
    actions: tuple[dict[str, Any], ...] = field(default=(), repr=False)
    """For a gate of several actions: each one's decision (``id``, ``action``,
    ``args``, ``name``, ``text``), in the gate's order."""
    response: JSON = None
    """A gate with a response form: the reviewer's answer, checked against it."""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def proceeds(self) -> bool:
        """Whether the agent may go ahead."""
        return self.action in PROCEED

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Decision:
        return cls(
            id=d["id"],
            gate_id=d["gate_id"],
            run_id=d["run_id"],
            action=d["action"],
            decided_by=d.get("decided_by", ""),
            text=d.get("text"),
            payload=d.get("payload"),
            decided_at=d.get("decided_at", ""),
            actions=tuple(d.get("actions") or ()),
            response=d.get("response"),
            raw=d,
        )


@dataclass(frozen=True)
class Gate:
    """A gate as the server last reported it."""

    id: str
    run_id: str
    kind: str
    status: str
    text: str
    payload: JSON
    allowed_actions: tuple[str, ...]
    mode: str
    priority: str
    decision: Decision | None
    idempotency_key: str | None
    status_reason: str | None
    expires_at: str | None
    spec: dict[str, Any] = field(repr=False)
    actions: tuple[dict[str, Any], ...] = field(default=(), repr=False)
    """Several proposed actions, each with its decision once taken."""
    agent_state: JSON = field(default=None, repr=False)
    """The opaque state the agent attached when opening the gate."""
    released: dict[str, Any] | None = None
    """Set when a reviewer released the gate (``by``, ``at``, ``from_mode``): the
    run went on without waiting; the gate is still open and was not decided."""
    workflow_node_id: str | None = None
    """The workflow node the gate belongs to, when the run declared one."""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def pending(self) -> bool:
        """Whether it still waits for a decision."""
        return self.status == "pending"

    def final_payload(self) -> JSON:
        """The payload the agent should act on: the reviewer's edit, else its own proposal."""
        if self.decision is not None and self.decision.payload is not None:
            return self.decision.payload
        return self.payload

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Gate:
        decision = d.get("decision")
        spec = d.get("spec") or {}
        return cls(
            id=d["id"],
            run_id=d["run_id"],
            kind=spec.get("kind", ""),
            status=d["status"],
            text=d.get("text", ""),
            payload=d.get("payload"),
            allowed_actions=tuple(d.get("allowed_actions") or ()),
            mode=d.get("mode", "sync"),
            priority=d.get("priority", "normal"),
            decision=Decision.from_json(decision) if decision else None,
            idempotency_key=d.get("idempotency_key"),
            status_reason=d.get("status_reason"),
            expires_at=d.get("expires_at"),
            spec=spec,
            agent_state=d.get("agent_state"),
            actions=tuple(d.get("actions") or ()),
            released=d.get("released"),
            workflow_node_id=d.get("workflow_node_id"),
            raw=d,
        )


@dataclass(frozen=True)
class Event:
    """One event of the log, as the SSE stream delivers it."""

    id: int
    """Its sequence number: resume after it with ``Last-Event-ID``."""
    type: str
    """``gate_opened``, ``gate_resolved``, ``run_status_changed``..."""
    data: dict[str, Any]
    """The event as JSON (``run_id``, ``actor``, ``at`` and the type's fields)."""
