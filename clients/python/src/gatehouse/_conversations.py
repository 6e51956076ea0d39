"""What the agent-framework adapters share: one Gatehouse run per
conversation, found again by its session after a restart, completed when the
conversation's turn ends and failed (with the reason) when the adapter raises.

The LangGraph adapter keeps its own (blocking and asyncio) version of this;
the adapters here are asyncio only, as the frameworks they wrap are.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from ._http import raise_if_withdrawn
from .aio import AsyncClient
from .errors import Conflict, GatehouseError, Released, Timeout
from .models import Gate

T = TypeVar("T")


def gate_key(prefix: str, *parts: str) -> str:
    """An idempotency key from stable parts, hashed when it would be too long."""
    key = ":".join([prefix, *parts])
    return key if len(key) <= 200 else f"{prefix}:{hashlib.sha256(key.encode()).hexdigest()}"


async def open_each(client: AsyncClient, items: Iterable[T], ask: Callable[[T], Awaitable[Gate]]) -> list[Gate]:
    """Opens one gate per item, in order, and returns them.

    A reviewer who saw the first gate may end the run before the next is
    opened; that open is refused (:class:`Conflict`), and the gates already
    open were withdrawn with the run. The agent then hears what happened to
    them (:class:`Cancelled`), as a wait on them would have said, not the
    refusal.
    """
    gates: list[Gate] = []
    for item in items:
        try:
            gates.append(await ask(item))
        except Conflict:
            raise_if_withdrawn([await client.gate(g.id) for g in gates])
            raise
    return gates


class ConversationRuns:
    """The run of each conversation: ``run_id`` when pinned, else one per session ``<prefix>:<conversation>``."""

    def __init__(self, client: AsyncClient, prefix: str, *, run_id: str | None = None, title: str | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self.pinned = run_id
        self.title = title
        self._runs: dict[str, str] = {}

    def session(self, conversation: str) -> str:
        return f"{self.prefix}:{conversation}"

    async def run(self, conversation: str, label: str) -> str:
        """The conversation's run: pinned, known, found by its session, or started."""
        if self.pinned is not None:
            return self.pinned
        if conversation not in self._runs:
            live = await self.client.active_runs(session_id=self.session(conversation))
            if live:
                self._runs[conversation] = str(live[0]["id"])
            else:
                title = self.title or f"{label} · {conversation}"
                self._runs[conversation] = await self.client.start_run(
                    {"conversation": conversation}, title=title, session_id=self.session(conversation)
                )
        return self._runs[conversation]

    async def complete(self, conversation: str, result: Any) -> None:
        """Completes the conversation's own run (a pinned run is left to its owner)."""
        run_id = self._runs.pop(conversation, None)
        if run_id is None:
            return
        try:
            await self.client.complete_run(run_id, result)
        except Conflict:
            pass  # already ended by an earlier process

    async def fail(self, conversation: str, failure: BaseException, adapter: str) -> None:
        """Fails the conversation's own run with the reason; a :class:`Timeout` leaves it waiting,
        and a :class:`Released` gate (a reviewer let the run go on) leaves it going."""
        if isinstance(failure, (Timeout, Released)):
            return
        run_id = self._runs.pop(conversation, None)
        if run_id is None:
            return
        reason = f"the {adapter} adapter stopped: {type(failure).__name__}: {failure}"[:1000]
        try:
            await self.client.fail_run(run_id, reason)
        except GatehouseError:
            pass  # already ended, or out of reach: the original error matters more
