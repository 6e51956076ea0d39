"""Run an OpenAI Agents SDK agent with Gatehouse deciding its tool approvals.

::

    from gatehouse import AsyncClient
    from gatehouse.openai_agents import GatehouseApprovals

    approvals = GatehouseApprovals(AsyncClient(url, token=agent_token), state_dir="agent-state")
    result = await approvals.run(agent, "Ship api 1.2", conversation_id="c-1")

Every interruption of a tool with ``needs_approval`` becomes an approval gate:
the tool call's arguments are its payload and the tool's argument schema its
``payload_schema``; the reviewer approves or rejects (their reason is what
the model is told). The SDK cannot run a tool with changed arguments, so
edits are not offered.

Restarts ask nothing twice. Before waiting, the run's ``RunState`` is saved
to ``state_dir`` (one file per conversation); the gates are opened on the
run of the session ``openai-agents:<conversation id>`` under the keys
``oa:<run id>:<call id>``. A process killed while it waits finds the saved
state, the same run and the same gates (decided meanwhile or not) when it
calls :meth:`GatehouseApprovals.run` again, and goes on from there. A tool
that was running when the process died runs again.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

from agents import Agent, RunResult, RunState, Runner
from agents.items import ToolApprovalItem

from ._conversations import ConversationRuns, gate_key, open_each
from ._http import settle_closed
from .aio import AsyncClient
from .errors import Released, Timeout
from .models import Gate

__all__ = ["GatehouseApprovals"]


class GatehouseApprovals:
    """Runs agents whose tool approvals are decided in Gatehouse.

    ``state_dir`` keeps each waiting conversation's ``RunState`` (JSON, the
    file removed once the run finishes). ``run_id`` pins the Gatehouse run;
    by default each conversation gets its own, completed with the final
    output. ``timeout`` bounds each wait for a decision
    (:class:`~gatehouse.Timeout`, which leaves the gates and the saved state
    for the next call); ``None`` waits as long as it takes. Any other error
    fails the conversation's run with the reason and drops its saved state.
    """

    def __init__(
        self,
        client: AsyncClient,
        *,
        state_dir: str | os.PathLike[str],
        run_id: str | None = None,
        title: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self.client = client
        self.state_dir = Path(state_dir)
        self.timeout = timeout
        self.runs = ConversationRuns(client, "openai-agents", run_id=run_id, title=title)
        self.gates_opened: list[Gate] = []
        """Every gate this object opened or found again, in order."""

    async def run(self, agent: Agent[Any], input: Any, *, conversation_id: str, **runner_options: Any) -> RunResult:
        """Runs ``agent`` on ``input`` until it finishes, every approval decided in Gatehouse.

        A conversation with a saved state (a process that stopped while it
        waited) goes on from that state; ``input`` is then not used.
        ``runner_options`` go to every ``Runner.run`` (``run_config``,
        ``max_turns``, ``context``...).
        """
        saved = self._saved(conversation_id)
        try:
            if saved.exists():
                state = await RunState.from_string(agent, saved.read_text(encoding="utf-8"))
                pending = state.get_interruptions()
            else:
                result = await Runner.run(agent, input, **runner_options)
                state, pending = result.to_state(), result.interruptions
            while pending:
                self._save(saved, state)
                run_id = await self.runs.run(conversation_id, f"OpenAI Agents {agent.name}")
                gates = await open_each(self.client, pending, lambda item: self._ask(run_id, item))
                closed = await asyncio.gather(*(self.client.wait(g.id, timeout=self.timeout) for g in gates))
                for item, gate in zip(pending, closed):
                    decision = settle_closed(gate)
                    if decision.action == "approve":
                        state.approve(item)
                    else:
                        state.reject(item, rejection_message=decision.text or "The reviewer rejected this tool call.")
                result = await Runner.run(agent, state, **runner_options)
                state, pending = result.to_state(), result.interruptions
        except Exception as failure:
            await self.runs.fail(conversation_id, failure, "OpenAI Agents")
            if not isinstance(failure, (Timeout, Released)):
                saved.unlink(missing_ok=True)
            raise
        saved.unlink(missing_ok=True)
        await self.runs.complete(conversation_id, _jsonable(result.final_output))
        return result

    async def _ask(self, run_id: str, item: ToolApprovalItem) -> Gate:
        name = item.tool_name or item.name or "tool"
        options: dict[str, Any] = {
            "payload": _arguments(item.arguments),
            "allowed_actions": ["approve", "reject"],
            "spec": {"action": name},
            "requires_human": True,
            "idempotency_key": gate_key("oa", run_id, str(item.call_id)),
        }
        schema = _tool_schema(item, name)
        if schema is not None:
            options["payload_schema"] = schema
        gate = await self.client.open_gate(run_id, "approval", f"Approve `{name}`", **options)
        self.gates_opened.append(gate)
        return gate

    def _saved(self, conversation_id: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", conversation_id)[:100]
        return self.state_dir / f"{safe}.json"

    def _save(self, path: Path, state: RunState[Any, Any]) -> None:
        """Writes the state whole or not at all: a crash mid-write keeps the previous one."""
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".json.partial")
        partial.write_text(state.to_string(), encoding="utf-8")
        os.replace(partial, path)


def _arguments(text: str | None) -> Any:
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return {"arguments": text}


def _tool_schema(item: ToolApprovalItem, name: str) -> dict[str, Any] | None:
    for tool in getattr(item.agent, "tools", None) or ():
        schema = getattr(tool, "params_json_schema", None)
        if getattr(tool, "name", None) == name and isinstance(schema, dict):
            return schema
    return None


def _jsonable(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return None
