"""How a LangGraph interrupt becomes a gate, and a gate's decision a resume value.

Pure functions of the interrupt and the closed gate: no network here, so
every shape can be checked on its own. :func:`mapping_for` picks, in order:

========================================  ===================================  ==============================================
interrupt value                           gate                                 resume value
========================================  ===================================  ==============================================
Agent Inbox ``HumanInterrupt`` (or a      approval, exactly the ``allow_*``    ``HumanResponse``: ``{"type": "accept" | "edit" |
one-element list of it)                   actions                              "response" | "ignore", "args": ...}``
langchain ``HITLRequest``                 approval proposing every action,     ``{"decisions": [...]}``, one per action, in order
(``action_requests``, ``review_configs``)  each decided on its own
langchain per-call ``tool_approval``      approval of that tool call, the      one ``Decision`` (approve, edit, reject, respond),
                                          tool's args schema its payload_schema  checked against the interrupt's schema
goal ``{"type": "goal_review"}``          goal_review                          ``{"decision": "accept" | "refine", "feedback"}``
plan ``{"type": "plan_review"}``          plan_review, the plan editable       ``{"decision": "approve" | "modify" | "reject",
                                                                               "feedback", "plan"}``
anything with a ``response_schema``       question with the schema as its      the answer, validated against the schema
                                          answer form
a string, or ``{"question": ...}``        question                             the answer text (``None`` if deferred)
anything else                             payload_review                       ``{"action", "payload", "text"}``
========================================  ===================================  ==============================================

An answer that does not fit (say, one its schema refuses) raises
:class:`AnswerInvalid`; the runner then asks again with a new gate that
says what was wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..models import Gate


class AnswerInvalid(ValueError):
    """The reviewer's answer cannot resume the graph; the message says why, for the next gate."""


@dataclass
class GateRequest:
    """What to open for an interrupt (the arguments of ``Client.open_gate``)."""

    kind: str
    text: str
    payload: Any = None
    allowed_actions: list[str] | None = None
    spec: dict[str, Any] = field(default_factory=dict)
    actions: list[dict[str, Any]] | None = None
    """Several proposed actions, each decided on its own (approval gates only)."""
    response_schema: dict[str, Any] | None = None
    """The answer's JSON Schema, filled by the reviewer as a form."""
    payload_schema: dict[str, Any] | None = None
    """What an edited payload must look like (a tool's argument schema): Gatehouse refuses an edit that breaks it."""

    def options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"spec": self.spec, "requires_human": True}
        if self.response_schema is not None:
            opts["response_schema"] = self.response_schema
        if self.payload_schema is not None:
            opts["payload_schema"] = self.payload_schema
        if self.payload is not None:
            opts["payload"] = self.payload
        if self.allowed_actions:
            opts["allowed_actions"] = self.allowed_actions
        if self.actions:
            opts["actions"] = self.actions
        return opts


class Mapping(Protocol):
    """One interrupt's translation both ways."""

    def gate(self) -> GateRequest:
        """The gate to open."""
        ...

    def resume(self, gate: Gate) -> Any:
        """The resume value for the resolved ``gate``; :class:`AnswerInvalid` to ask again."""
        ...

    def retry(self, gate: Gate, problem: str) -> GateRequest:
        """The gate asking again after ``gate``'s answer was refused for ``problem``."""
        ...


class _Base:
    def gate(self) -> GateRequest:
        raise NotImplementedError

    def retry(self, gate: Gate, problem: str) -> GateRequest:
        request = self.gate()
        request.text = f"**Your previous answer could not be used:** {problem}\n\n---\n\n{request.text}"
        # Keep the reviewer's own attempt to fix, where it has the right shape.
        if gate.decision is not None and gate.decision.payload is not None and request.payload is not None:
            if type(gate.decision.payload) is type(request.payload):
                request.payload = gate.decision.payload
        return request


def _code(value: Any) -> str:
    return "```json\n" + json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n```"


def _response(gate: Gate) -> Any:
    return gate.decision.response if gate.decision is not None else None


def _decision(gate: Gate) -> tuple[str, Any, str | None]:
    d = gate.decision
    if d is None:
        raise AnswerInvalid(f"gate {gate.id} closed without a decision")
    return d.action, d.payload, d.text


# Agent Inbox ------------------------------------------------------------------

_INBOX_ACTIONS = (("allow_accept", "approve"), ("allow_edit", "edit"), ("allow_respond", "respond"), ("allow_ignore", "reject"))


def is_human_interrupt(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("action_request"), dict)
        and "action" in value["action_request"]
        and isinstance(value.get("config"), dict)
    )


@dataclass
class HumanInterruptMapping(_Base):
    """Agent Inbox's ``HumanInterrupt``: an approval gate with exactly the allowed actions.

    accept → approve, edit → edit (the args are the payload), respond →
    respond, ignore → reject (the reviewer's reason, if they gave one, is the
    response's ``args``, a string as ``HumanResponse`` allows). A list holding
    one interrupt is answered with a list holding one response, as Agent Inbox does.
    """

    value: dict[str, Any]
    as_list: bool = False

    def gate(self) -> GateRequest:
        request = self.value["action_request"]
        config = self.value["config"]
        allowed = [action for flag, action in _INBOX_ACTIONS if config.get(flag)]
        if not allowed:
            raise ValueError(f"HumanInterrupt for `{request['action']}` allows no response at all")
        text = self.value.get("description") or f"Approve `{request['action']}`"
        args = request.get("args")
        return GateRequest(
            kind="approval",
            text=text,
            payload=args if args is not None else {},
            allowed_actions=allowed,
            spec={"action": str(request["action"])},
        )

    def resume(self, gate: Gate) -> Any:
        action, payload, text = _decision(gate)
        name = self.value["action_request"]["action"]
        if action == "approve":
            response: dict[str, Any] = {"type": "accept", "args": None}
        elif action == "edit":
            response = {"type": "edit", "args": {"action": name, "args": payload}}
        elif action == "respond":
            response = {"type": "response", "args": text or ""}
        elif action == "reject":
            response = {"type": "ignore", "args": text or None}
        else:
            raise AnswerInvalid(f"`{action}` is not a response this interrupt takes")
        return [response] if self.as_list else response


# langchain v1 HumanInTheLoopMiddleware -----------------------------------------


def is_hitl_request(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("action_requests"), list) and "review_configs" in value


@dataclass
class HitlRequestMapping(_Base):
    """langchain's batched ``HITLRequest``: one approval gate proposing every action.

    Each ``action_request`` is one of the gate's proposed actions (id
    ``action-N``, its name, args and description, and its review config's
    allowed decisions). The reviewer decides them together or one by one,
    in as many sittings as they like; the gate resolves once every action
    is decided, and the decisions go back as ``{"decisions": [...]}`` in the
    actions' order: approve; edit with ``edited_action`` (name and args);
    reject with the reviewer's message; respond with it.
    """

    value: dict[str, Any]

    def _actions(self) -> list[tuple[dict[str, Any], list[str]]]:
        requests = self.value["action_requests"]
        configs = self.value.get("review_configs") or []
        by_name = {c.get("action_name"): c for c in configs}
        out = []
        for i, request in enumerate(requests):
            config = configs[i] if len(configs) == len(requests) else by_name.get(request.get("name"), {})
            out.append((request, list(config.get("allowed_decisions") or ["approve", "edit", "reject", "respond"])))
        return out

    def gate(self) -> GateRequest:
        actions = self._actions()
        if not actions:
            raise ValueError("HITLRequest with no action_requests")
        names = [str(r.get("name", "action")) for r, _ in actions]
        count = f"{len(actions)} tool call{'s' if len(actions) > 1 else ''}"
        proposed = [
            {
                "id": f"action-{i}",
                "name": name,
                "args": request.get("args") or {},
                "description": request.get("description"),
                "allowed_actions": allowed,
            }
            for i, (name, (request, allowed)) in enumerate(zip(names, actions), 1)
        ]
        return GateRequest(
            kind="approval",
            text=f"**{count} to review:** {', '.join(f'`{n}`' for n in names)}",
            actions=proposed,
            spec={"action": ", ".join(names)},
        )

    def resume(self, gate: Gate) -> Any:
        action, _, text = _decision(gate)
        decided = {d.get("id"): d for d in (gate.decision.actions if gate.decision else ())}
        decisions = []
        for i, (request, _allowed) in enumerate(self._actions(), 1):
            one = decided.get(f"action-{i}")
            # A server that kept no per-action decisions decided the gate as a whole.
            decisions.append(_tool_decision(request, one) if one else _whole(action, text))
        return {"decisions": decisions}


def _whole(action: str, text: str | None) -> dict[str, Any]:
    if action == "approve":
        return {"type": "approve"}
    if action == "reject":
        return {"type": "reject", "message": text} if text else {"type": "reject"}
    raise AnswerInvalid(f"`{action}` does not decide the tool calls; decide each, or approve or reject them all")


def _tool_decision(request: dict[str, Any], decided: dict[str, Any]) -> dict[str, Any]:
    """langchain's decision for one action from the gate's decision on it."""
    kind, text = decided.get("action"), decided.get("text")
    if kind == "approve":
        return {"type": "approve"}
    if kind == "edit":
        args = decided.get("args")
        name = decided.get("name") or request.get("name")
        return {"type": "edit", "edited_action": {"name": name, "args": request.get("args", {}) if args is None else args}}
    if kind == "reject":
        return {"type": "reject", "message": text} if text else {"type": "reject"}
    if kind == "respond":
        return {"type": "respond", "message": text or ""}
    raise AnswerInvalid(f"`{kind}` is not a decision on a tool call")


def is_tool_approval(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == "tool_approval" and "name" in value


def allowed_from_schema(schema: Any) -> list[str]:
    """The decision types a per-call ``response_schema`` accepts."""
    if not isinstance(schema, dict):
        return ["approve", "edit", "reject", "respond"]
    mapping = (schema.get("discriminator") or {}).get("mapping")
    if isinstance(mapping, dict) and mapping:
        return list(mapping)
    const = ((schema.get("properties") or {}).get("type") or {}).get("const")
    return [const] if isinstance(const, str) else ["approve", "edit", "reject", "respond"]


@dataclass
class ToolApprovalMapping(_Base):
    """langchain's per-call ``tool_approval``: one approval gate for one tool call."""

    value: dict[str, Any]
    response_schema: Any = None

    def gate(self) -> GateRequest:
        allowed = [a for a in allowed_from_schema(self.response_schema) if a in ("approve", "edit", "reject", "respond")]
        return GateRequest(
            kind="approval",
            text=self.value.get("description") or f"Approve `{self.value['name']}`",
            payload=self.value.get("args") or {},
            allowed_actions=allowed,
            spec={"action": str(self.value["name"])},
            payload_schema=edit_args_schema(self.response_schema),
        )

    def resume(self, gate: Gate) -> Any:
        action, payload, text = _decision(gate)
        if action == "approve":
            decision: dict[str, Any] = {"type": "approve"}
        elif action == "edit":
            decision = {"type": "edit", "edited_action": {"name": self.value["name"], "args": payload}}
        elif action == "reject":
            decision = {"type": "reject", "message": text} if text else {"type": "reject"}
        elif action == "respond":
            decision = {"type": "respond", "message": text or ""}
        else:
            raise AnswerInvalid(f"`{action}` is not a decision on a tool call")
        # LangGraph refuses a decision its schema does not take, and would
        # refuse it again on every run: ask again instead, saying why.
        if isinstance(self.response_schema, dict):
            problem = validation_problem(decision, self.response_schema)
            if problem:
                raise AnswerInvalid(f"`{self.value['name']}` cannot take this {action}: {problem}")
        return decision


def edit_args_schema(schema: Any) -> dict[str, Any] | None:
    """The tool's argument schema inside a per-call ``response_schema``: the edit branch's ``edited_action.args``."""
    if not isinstance(schema, dict):
        return None
    defs = schema.get("$defs") or {}

    def deref(node: Any) -> Any:
        for _ in range(8):  # a chain of references, never a loop
            ref = node.get("$ref") if isinstance(node, dict) else None
            if not (isinstance(ref, str) and ref.startswith("#/$defs/")):
                break
            node = defs.get(ref[len("#/$defs/") :])
        return node if isinstance(node, dict) else None

    for branch in schema.get("oneOf") or schema.get("anyOf") or [schema]:
        found = deref(branch) or {}
        props = found.get("properties") or {}
        if (props.get("type") or {}).get("const") != "edit":
            continue
        action = deref(props.get("edited_action")) or {}
        args = deref((action.get("properties") or {}).get("args"))
        if args is None:
            return None
        # Nested models still point into $defs: carry them along.
        return {**args, "$defs": defs} if "$ref" in json.dumps(args) else dict(args)
    return None


# Goal and plan reviews (goal and plan collaboration) ------------------------------


def is_seed_review(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in ("goal_review", "plan_review")


@dataclass
class GoalReviewMapping(_Base):
    """The goal review: accept, or refine with feedback."""

    value: dict[str, Any]

    def gate(self) -> GateRequest:
        v = self.value
        goal = v.get("goal_spec", v.get("goal", v))
        text = v.get("prompt") or "Review the goal. Accept it, or ask for a refinement saying what to change."
        details = {k: v[k] for k in ("feasibility", "notes") if k in v}
        if details:
            text += "\n\n" + _code(details)
        return GateRequest(
            kind="goal_review",
            text=text,
            payload=goal,
            spec={"goal": goal, "round": int(v.get("iteration", 1) or 1)},
        )

    def resume(self, gate: Gate) -> Any:
        action, _, text = _decision(gate)
        if action == "approve":
            return {"decision": "accept", "feedback": text or ""}
        if action in ("needs_revision", "respond", "edit"):
            return {"decision": "refine", "feedback": text or ""}
        raise AnswerInvalid(f"`{action}` is not an answer to a goal review (accept or refine)")


@dataclass
class PlanReviewMapping(_Base):
    """The plan review: approve, modify (edit the plan or say what to change), or reject."""

    value: dict[str, Any]

    def gate(self) -> GateRequest:
        v = self.value
        plan = v.get("plan", v)
        text = v.get("prompt") or "Review the plan: approve it, edit it, ask for changes, or reject it."
        # Gatehouse makes an edited plan the run's plan, so only a plan in its
        # shape (tasks with task_id and description) can be edited in place.
        allowed = None if is_gatehouse_plan(plan) else ["approve", "needs_revision", "reject"]
        return GateRequest(
            kind="plan_review",
            text=text,
            payload=plan,
            allowed_actions=allowed,
            spec={"round": int(v.get("iteration", 1) or 1)},
        )

    def resume(self, gate: Gate) -> Any:
        action, payload, text = _decision(gate)
        if action == "approve":
            return {"decision": "approve", "feedback": text or ""}
        if action == "edit":
            return {"decision": "modify", "feedback": text or "edited by the reviewer", "plan": payload}
        if action == "needs_revision":
            return {"decision": "modify", "feedback": text or ""}
        if action == "reject":
            return {"decision": "reject", "feedback": text or ""}
        raise AnswerInvalid(f"`{action}` is not an answer to a plan review")


def is_gatehouse_plan(plan: Any) -> bool:
    """Whether ``plan`` has Gatehouse's plan shape: ``{"tasks": [{"task_id", "description", ...}]}``."""
    tasks = plan.get("tasks") if isinstance(plan, dict) else None
    return isinstance(tasks, list) and all(
        isinstance(t, dict) and isinstance(t.get("task_id"), str) and isinstance(t.get("description"), str)
        for t in tasks
    )


# Answers with a schema, questions, payloads ---------------------------------------


def schema_template(schema: dict[str, Any]) -> Any:
    """A starting answer for the reviewer to edit: defaults, else empty values by type."""
    if "default" in schema:
        return schema["default"]
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or (kind is None and "properties" in schema):
        return {k: schema_template(s) for k, s in (schema.get("properties") or {}).items() if isinstance(s, dict)}
    return {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False}.get(str(kind))


def _question_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("question", "prompt", "message", "description", "text"):
            text = value.get(key)
            if isinstance(text, str) and text.strip():
                return text
    return None


@dataclass
class SchemaMapping(_Base):
    """An interrupt with a ``response_schema``.

    An object schema becomes the gate's own response form: the reviewer
    fills it, Gatehouse checks the answer against it before accepting it, and
    the decision's ``response`` resumes the graph (checked here once more).
    Any other schema (a bare string or number...) is shown in the text with
    an answer form as the payload: the reviewer edits it or responds (read as
    JSON when it parses, else as a string), and a wrong answer asks again.
    """

    value: Any
    schema: dict[str, Any]

    def native(self) -> bool:
        """Whether Gatehouse can hold the schema as the gate's form (an object schema)."""
        return self.schema.get("type") == "object"

    def gate(self) -> GateRequest:
        question = _question_text(self.value) or "The graph needs an answer."
        text = question
        if not isinstance(self.value, str):
            text += "\n\n" + _code(self.value)
        if self.native():
            return GateRequest(kind="question", text=text, allowed_actions=["respond"], response_schema=self.schema)
        text += "\n\nEdit the answer form (the payload), or respond with JSON. The answer must match:\n\n"
        text += _code(self.schema)
        return GateRequest(
            kind="question", text=text, payload=schema_template(self.schema), allowed_actions=["edit", "respond"]
        )

    def resume(self, gate: Gate) -> Any:
        action, payload, text = _decision(gate)
        response = _response(gate)
        if action == "respond" and response is not None:
            candidates = [response]
        elif action == "edit":
            candidates = [payload]
        elif action == "respond":
            candidates = []
            try:
                candidates.append(json.loads(text or ""))
            except ValueError:
                pass
            candidates.append(text or "")
        else:
            raise AnswerInvalid(f"`{action}` does not answer; edit the form or respond")
        problems = []
        for answer in candidates:
            problem = validation_problem(answer, self.schema)
            if not problem:
                return answer
            problems.append(problem)
        raise AnswerInvalid(problems[0])  # the JSON reading's problem, when the text was JSON


def validation_problem(answer: Any, schema: dict[str, Any]) -> str:
    """Why ``answer`` breaks ``schema`` (empty when it fits)."""
    import jsonschema

    validator_class = jsonschema.validators.validator_for(schema)
    validator = validator_class(schema)
    errors = sorted(validator.iter_errors(answer), key=lambda e: list(e.absolute_path))
    if not errors:
        return ""
    first = errors[0]
    where = "/".join(str(p) for p in first.absolute_path) or "the answer"
    return f"{where}: {first.message}"


@dataclass
class QuestionMapping(_Base):
    """A plain question: the answer text resumes the graph (``None`` if the reviewer defers)."""

    value: Any

    def gate(self) -> GateRequest:
        text = _question_text(self.value) or "The graph asks a question."
        payload = None
        if isinstance(self.value, dict):
            rest = {k: v for k, v in self.value.items() if v != text}
            payload = rest or None
        return GateRequest(kind="question", text=text, payload=payload)

    def resume(self, gate: Gate) -> Any:
        action, _, text = _decision(gate)
        if action == "respond":
            return text
        if action == "defer":
            return None
        raise AnswerInvalid(f"`{action}` does not answer the question")


@dataclass
class PayloadMapping(_Base):
    """Any other value: a payload review; resumes with ``{"action", "payload", "text"}``."""

    value: Any

    def gate(self) -> GateRequest:
        text = _question_text(self.value) or "Review this before the graph goes on."
        return GateRequest(kind="payload_review", text=text, payload=self.value)

    def resume(self, gate: Gate) -> Any:
        action, payload, text = _decision(gate)
        final = payload if action == "edit" else self.value
        return {"action": action, "payload": final, "text": text}


# Choosing ---------------------------------------------------------------------------

Mapper = Callable[[Any], "Mapping | None"]
"""A custom rule: given a LangGraph ``Interrupt``, its mapping, or ``None`` to pass."""


def mapping_for(interrupt: Any, custom: tuple[Mapper, ...] = ()) -> Mapping:
    """The mapping for a LangGraph ``Interrupt`` (``value``, ``id``, ``response_schema``)."""
    for rule in custom:
        found = rule(interrupt)
        if found is not None:
            return found
    value = interrupt.value
    schema = getattr(interrupt, "response_schema", None)
    if is_human_interrupt(value):
        return HumanInterruptMapping(value)
    if isinstance(value, list) and len(value) == 1 and is_human_interrupt(value[0]):
        return HumanInterruptMapping(value[0], as_list=True)
    if is_hitl_request(value):
        return HitlRequestMapping(value)
    if is_tool_approval(value):
        return ToolApprovalMapping(value, schema)
    if is_seed_review(value):
        return GoalReviewMapping(value) if value["type"] == "goal_review" else PlanReviewMapping(value)
    if isinstance(schema, dict):
        return SchemaMapping(value, schema)
    if isinstance(value, str) or (isinstance(value, dict) and isinstance(value.get("question"), str)):
        return QuestionMapping(value)
    return PayloadMapping(value)
