"""Decide a Claude Agent SDK session's tool permissions in Gatehouse.

::

    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient
    from gatehouse import AsyncClient
    from gatehouse.claude_agent_sdk import GatehousePermissions

    permissions = GatehousePermissions(AsyncClient(url, token=agent_token), conversation_id="c-1")
    options = ClaudeAgentOptions(can_use_tool=permissions)
    ...
    await permissions.finish()   # completes the conversation's run

Each permission request the SDK sends to ``can_use_tool`` becomes an approval
gate: the SDK's prompt (``title``, else the tool's name) with its description
and reason as text, the tool input as payload. The reviewer approves
(``PermissionResultAllow``, the input as sent), edits
(``PermissionResultAllow(updated_input=...)``) or rejects
(``PermissionResultDeny`` with their reason, which Claude reads).

It never allows without a decision: a gate that expires (or outwaits
``timeout``, staying open) is denied, and one
withdrawn (a cancelled run), or a Gatehouse that cannot be asked, is denied
with ``interrupt=True`` so the session stops. The gates are opened on the run
of the session ``claude-agent-sdk:<conversation id>`` under the keys
``claude:<run id>:<tool use id>``: the same request asked again (a restarted
session resuming the same tool call) finds its gate and decision.
"""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny, ToolPermissionContext

from ._conversations import ConversationRuns, gate_key
from ._http import settle_closed
from .aio import AsyncClient
from .errors import Cancelled, Expired, GatehouseError, Released, Timeout
from .models import Gate

__all__ = ["GatehousePermissions"]


class GatehousePermissions:
    """A ``can_use_tool`` callback that asks Gatehouse; pass the object itself.

    ``run_id`` pins the Gatehouse run; by default the conversation gets its
    own, which :meth:`finish` completes (or :meth:`fail` fails) when the
    session ends. ``timeout`` bounds each wait for a decision; a wait that
    runs out denies the tool call and leaves the gate open.
    """

    def __init__(
        self,
        client: AsyncClient,
        *,
        conversation_id: str,
        run_id: str | None = None,
        title: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self.client = client
        self.conversation_id = conversation_id
        self.timeout = timeout
        self.runs = ConversationRuns(client, "claude-agent-sdk", run_id=run_id, title=title)
        self.gates_opened: list[Gate] = []
        """Every gate this object opened or found again, in order."""

    async def __call__(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        """The SDK's ``can_use_tool``: asks a reviewer and answers with their decision."""
        try:
            run_id = await self.runs.run(self.conversation_id, "Claude Agent SDK")
            gate = await self._ask(run_id, tool_name, tool_input, context)
            decision = settle_closed(await self.client.wait(gate.id, timeout=self.timeout))
        except (Expired, Timeout) as gone:
            return PermissionResultDeny(message=f"No reviewer decided in time: {gone}")
        except Cancelled as gone:
            return PermissionResultDeny(message=f"The reviewer withdrew the request: {gone}", interrupt=True)
        except Released:
            # The run goes on without this call: it does not run, the session is not stopped.
            return PermissionResultDeny(message="A reviewer let the run go on without deciding this tool call; it did not run.")
        except GatehouseError as unreachable:
            # Fail closed: without a decision the tool does not run.
            return PermissionResultDeny(message=f"Gatehouse could not be asked: {unreachable}", interrupt=True)
        if decision.action == "approve":
            return PermissionResultAllow(updated_input=tool_input)
        if decision.action == "edit" and isinstance(decision.payload, dict):
            return PermissionResultAllow(updated_input=decision.payload)
        return PermissionResultDeny(message=decision.text or "The reviewer rejected this tool call.")

    async def finish(self, result: Any = None) -> None:
        """Completes the conversation's own run, if it asked anything (a pinned run is left to its owner)."""
        await self.runs.complete(self.conversation_id, result)

    async def fail(self, reason: BaseException) -> None:
        """Fails the conversation's own run with ``reason`` (a session that crashed)."""
        await self.runs.fail(self.conversation_id, reason, "Claude Agent SDK")

    async def _ask(self, run_id: str, tool: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> Gate:
        text = context.title or f"Claude wants to use `{tool}`"
        details = [d for d in (context.description, context.decision_reason) if d]
        if context.blocked_path:
            details.append(f"Blocked path: `{context.blocked_path}`")
        if details:
            text += "\n\n" + "\n\n".join(details)
        options: dict[str, Any] = {
            "payload": tool_input,
            "allowed_actions": ["approve", "edit", "reject"],
            "spec": {"action": tool},
            "requires_human": True,
        }
        if context.agent_id:
            options["agent"] = context.agent_id
        if context.tool_use_id:
            options["idempotency_key"] = gate_key("claude", run_id, context.tool_use_id)
        gate = await self.client.open_gate(run_id, "approval", text, **options)
        self.gates_opened.append(gate)
        return gate
