"""Run a Pydantic AI agent with Gatehouse deciding its deferred tool approvals.

::

    from gatehouse import AsyncClient
    from gatehouse.pydantic_ai import GatehouseApprovals

    agent = Agent(model, output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def deploy(service: str, version: str) -> str: ...

    result = await GatehouseApprovals(AsyncClient(url, token=agent_token)).run(agent, "Ship api 1.2", conversation_id="c-1")

A run that ends with :class:`~pydantic_ai.DeferredToolRequests` has its
``approvals`` asked as approval gates (the call's arguments as payload, the
tool's argument schema as ``payload_schema``), all at once; the decisions go
back as :class:`~pydantic_ai.DeferredToolResults`: approve →
``ToolApproved()``, edit → ``ToolApproved(override_args=...)``, reject →
``ToolDenied(<the reviewer's reason>)``. The agent then runs on with the
message history until its output is no longer deferred.

The gates are opened on the run of the session ``pydantic-ai:<conversation
id>`` under the keys ``pa:<run id>:<tool call id>``. Deferred calls that are
not approvals (external execution, questions) are the caller's to answer.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from pydantic_ai.messages import ToolCallPart

from ._conversations import ConversationRuns, gate_key, open_each
from ._http import settle_closed
from .aio import AsyncClient
from .models import Gate

__all__ = ["GatehouseApprovals"]


class GatehouseApprovals:
    """Runs Pydantic AI agents whose tool approvals are decided in Gatehouse.

    ``run_id`` pins the Gatehouse run; by default each conversation gets its
    own, completed with the final output and failed (with the reason) when
    :meth:`run` raises. ``timeout`` bounds each wait for a decision
    (:class:`~gatehouse.Timeout`, which leaves the gates open); ``None``
    waits as long as it takes.
    """

    def __init__(
        self, client: AsyncClient, *, run_id: str | None = None, title: str | None = None, timeout: float | None = None
    ) -> None:
        self.client = client
        self.timeout = timeout
        self.runs = ConversationRuns(client, "pydantic-ai", run_id=run_id, title=title)
        self.gates_opened: list[Gate] = []
        """Every gate this object opened or found again, in order."""

    async def run(self, agent: Agent[Any, Any], prompt: Any, *, conversation_id: str, **run_options: Any) -> Any:
        """Runs ``agent`` on ``prompt`` until its output is no longer deferred; returns the last run's result.

        ``run_options`` go to every ``agent.run`` (``deps``, ``output_type``,
        ``message_history`` for the first...). A result whose deferred
        requests hold calls other than approvals is returned as it is.
        """
        try:
            result = await agent.run(prompt, **run_options)
            options = {k: v for k, v in run_options.items() if k != "message_history"}
            while isinstance(result.output, DeferredToolRequests) and result.output.approvals:
                if result.output.calls:
                    break  # external calls wait for the caller; approvals alone cannot resume the run
                run_id = await self.runs.run(conversation_id, f"Pydantic AI {agent.name or 'agent'}")
                decided = await self._decide(run_id, agent, result.output.approvals)
                result = await agent.run(
                    message_history=result.all_messages(), deferred_tool_results=decided, **options
                )
        except Exception as failure:
            await self.runs.fail(conversation_id, failure, "Pydantic AI")
            raise
        if not isinstance(result.output, DeferredToolRequests):
            await self.runs.complete(conversation_id, _jsonable(result.output))
        return result

    async def _decide(self, run_id: str, agent: Agent[Any, Any], calls: list[ToolCallPart]) -> DeferredToolResults:
        """Asks every approval at once; returns the results once all are decided."""
        gates = await open_each(self.client, calls, lambda call: self._ask(run_id, agent, call))
        closed = await asyncio.gather(*(self.client.wait(g.id, timeout=self.timeout) for g in gates))
        approvals: dict[str, Any] = {}
        for call, gate in zip(calls, closed):
            decision = settle_closed(gate)
            if decision.action == "approve":
                approvals[call.tool_call_id] = ToolApproved()
            elif decision.action == "edit":
                approvals[call.tool_call_id] = ToolApproved(override_args=decision.payload)
            else:
                approvals[call.tool_call_id] = ToolDenied(decision.text or "The reviewer rejected this tool call.")
        return DeferredToolResults(approvals=approvals)

    async def _ask(self, run_id: str, agent: Agent[Any, Any], call: ToolCallPart) -> Gate:
        options: dict[str, Any] = {
            "payload": call.args_as_dict(),
            "allowed_actions": ["approve", "edit", "reject"],
            "spec": {"action": call.tool_name},
            "requires_human": True,
            "idempotency_key": gate_key("pa", run_id, call.tool_call_id),
        }
        schema = _tool_schema(agent, call.tool_name)
        if schema is not None:
            options["payload_schema"] = schema
        gate = await self.client.open_gate(run_id, "approval", f"Approve `{call.tool_name}`", **options)
        self.gates_opened.append(gate)
        return gate


def _tool_schema(agent: Agent[Any, Any], name: str) -> dict[str, Any] | None:
    """The argument schema of the agent's function tool ``name``, when it has one."""
    for toolset in agent.toolsets:
        tool = (getattr(toolset, "tools", None) or {}).get(name)
        schema = getattr(getattr(tool, "function_schema", None), "json_schema", None)
        if isinstance(schema, dict):
            return schema
    return None


def _jsonable(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return None
