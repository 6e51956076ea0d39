"""Run a LangGraph graph with Gatehouse as the human answering its ``interrupt()`` calls.

::

    from gatehouse import Client
    from gatehouse.langgraph import GatehouseHuman

    human = GatehouseHuman(Client(url, token=agent_token))
    final_state = human.invoke(graph, {"messages": [...]}, {"configurable": {"thread_id": "t-1"}})

Every pending interrupt becomes a gate (see :mod:`gatehouse.langgraph.mapping`
for the shapes); once a reviewer decides, the graph resumes with
``Command(resume={interrupt_id: value})``: always by interrupt id, so
several pending interrupts are never mixed up.

Restarts ask nothing twice. The graph's own checkpointer (use
``SqliteSaver`` for a process that may restart) keeps the pending
interrupts and their ids; the gate for an interrupt is opened under the
idempotency key ``lg:<thread id>:<interrupt id>:<attempt>`` on the run of the
session ``langgraph:<thread id>``, so a restarted process finds the same run
and the same gates, decided or not, instead of opening new ones. Every
checkpoint the adapter writes carries the digest of the input that started
its turn (metadata ``gatehouse_input``), which tells a restarted caller
passing its input again from a new message on the thread.

One checkpoint costs one request: a single pending interrupt's gate is
opened with the server holding the answer until it is decided (``POST
/runs/{id}/gates?wait=``), on the client's kept-alive connection; only a gate
still pending after that hold is long-polled (``GET /gates/{id}/wait``).
Several pending interrupts are opened at once and waited on together.

A decision the graph cannot take (a tool edit its schema refuses) is asked
again with a new gate saying why, and a call that raises fails the
thread's run with the reason: no thread sticks and no run is left open.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from typing import Any

from langgraph.types import Command

from .._http import raise_if_withdrawn, settle_closed
from ..aio import AsyncClient
from ..client import POLL_SECONDS, Client
from ..errors import Conflict, GatehouseError, Timeout
from ..models import Gate
from .mapping import AnswerInvalid, GateRequest, Mapper, Mapping, mapping_for

try:  # LangGraph checks a resume value against the interrupt's response_schema with pydantic
    from pydantic import ValidationError as _REFUSED
except ImportError:  # pragma: no cover - langgraph depends on pydantic

    class _REFUSED(Exception):  # type: ignore[no-redef]
        pass

__all__ = ["AnswerInvalid", "GatehouseHuman", "GateRequest", "Mapping", "mapping_for", "idempotency_key"]


def idempotency_key(thread_id: str, interrupt_id: str, attempt: int = 1) -> str:
    """The gate key for an interrupt: the same in every process that resumes the thread."""
    thread = str(thread_id)
    if len(thread) > 120:
        thread = hashlib.sha256(thread.encode()).hexdigest()
    return f"lg:{thread}:{interrupt_id}:{attempt}"


def session_for(thread_id: str) -> str:
    return f"langgraph:{thread_id}"


@dataclass
class _Asked:
    """An interrupt, its mapping and the gate currently asking it."""

    interrupt_id: str
    mapping: Mapping
    attempt: int
    gate: Gate
    held: float = 0.0
    """Seconds the opening request already waited for the decision."""


class GatehouseHuman:
    """Drives a compiled graph, answering its interrupts through Gatehouse.

    ``client`` is a :class:`~gatehouse.Client` for :meth:`invoke` or an
    :class:`~gatehouse.AsyncClient` for :meth:`ainvoke`. ``run_id`` pins the
    Gatehouse run; by default each thread gets one (found again by its
    session on restart). ``mappers`` are tried before the built-in shapes.
    ``max_attempts`` bounds how often one interrupt is asked again after an
    answer that did not fit. ``timeout`` bounds each wait for a decision
    (:class:`~gatehouse.Timeout`); ``None`` waits as long as it takes.
    With ``complete_run``, a thread's own run is completed (with the final
    state) when the graph finishes; a pinned run is left to its owner.

    With ``allow_rules``, approval interrupts (Agent Inbox ``HumanInterrupt``,
    langchain's tool approvals) are opened without ``requires_human``, so an
    allow-rule a reviewer made for that action and arguments passes the gate
    the moment it opens (decided by ``rule:<id>``, in the audit log like any
    decision) and the graph goes on without waiting. The run's own policy
    then applies as well; a run's default policy waits for a human. Without
    it (the default) every interrupt waits for a person's decision.
    """

    def __init__(
        self,
        client: Client | AsyncClient,
        *,
        run_id: str | None = None,
        title: str | None = None,
        mappers: tuple[Mapper, ...] = (),
        max_attempts: int = 5,
        timeout: float | None = None,
        complete_run: bool = True,
        allow_rules: bool = False,
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.title = title
        self.mappers = mappers
        self.max_attempts = max_attempts
        self.timeout = timeout
        self.complete_run = complete_run
        self.allow_rules = allow_rules
        self._runs: dict[str, str] = {}
        self.gates_opened: list[Gate] = []
        """Every gate this object opened or found again, in order."""

    # Blocking ----------------------------------------------------------------------

    def invoke(self, graph: Any, input: Any, config: dict[str, Any], *, resume: bool = True) -> Any:
        """Runs ``graph`` on ``config``'s thread until it finishes, answering every interrupt.

        With ``resume`` (the default), a thread waiting at interrupts is
        continued rather than started over: its interrupts are asked (or
        their gates found again) and ``input`` is not used. A thread at rest
        runs ``input`` as its next turn, unless that same input already
        started the turn the thread finished (a restarted process passing its
        input again), which asks nothing and returns the state. Returns what
        the last ``graph.invoke`` returned.

        A call that raises ends the thread's own run as failed, with the
        reason, before re-raising; a :class:`~gatehouse.Timeout` leaves it
        open, its gate still waiting for a later call.
        """
        client = self.client
        if not isinstance(client, Client):
            raise TypeError("invoke needs a gatehouse.Client; use ainvoke with an AsyncClient")
        thread = _thread_id(config)
        snapshot = graph.get_state(config)
        # A thread with no checkpoint yet has no run yet: runs start after the first step.
        new_thread = not _has_checkpoint(snapshot)
        first, turn = _opening(snapshot, input, resume)
        marked = _marked(config, turn)
        output: Any = _SKIP
        run_id: str | None = None
        waits: dict[str, Future[Gate]] = {}
        pool = _LazyPool()
        retries: dict[str, _Asked] = {}
        try:
            if first is not _SKIP:
                output = graph.invoke(first, marked)
            while True:
                if _finished(output):
                    break
                pending = _interrupts_in(output)
                if pending is None:
                    snapshot = graph.get_state(config)
                    pending = snapshot.interrupts
                if not pending:
                    break
                run_id = run_id or self._run_sync(client, thread, graph, create=True, new_thread=new_thread)
                assert run_id is not None
                interrupts = _unique(pending)
                hold = self._hold(interrupts)
                asked: list[_Asked] = []
                for i in interrupts:
                    try:
                        asked.append(retries.pop(i.id, None) or self._ask_sync(client, run_id, thread, i, hold))
                    except Conflict:  # the run ended part-way: say what became of the gates asked
                        raise_if_withdrawn([client.gate(a.gate.id) for a in asked])
                        raise
                answers = self._answers_sync(client, run_id, thread, asked, pool, waits)
                try:
                    output = graph.invoke(Command(resume={a.interrupt_id: v for a, v in answers}), marked)
                except _REFUSED as refused:  # the graph's own check of the answer; nothing was saved
                    for a, _ in answers:
                        request = self._refusal(a, _first_line(refused))
                        retries[a.interrupt_id] = self._open_sync(client, run_id, thread, a.interrupt_id, a.mapping, request, a.attempt + 1)
        except Exception as failure:
            self._end_failed_sync(client, thread, graph, new_thread, failure)
            raise
        finally:
            pool.shutdown()
        if output is _SKIP:
            output = snapshot.values
        run_id = run_id or self._run_sync(client, thread, graph, create=False, new_thread=new_thread)
        if self.complete_run and run_id is not None and run_id != self.run_id:
            _ignore_conflict(lambda: client.complete_run(run_id, _jsonable(output)))
            self._runs.pop(thread, None)
        return output

    def _end_failed_sync(self, client: Client, thread: str, graph: Any, new_thread: bool, failure: Exception) -> None:
        """Fails the thread's own run with the reason, so no run is left open by a crash."""
        if isinstance(failure, Timeout):
            return  # the gate stays open for a later call
        try:
            run_id = self._run_sync(client, thread, graph, create=False, new_thread=new_thread)
            if run_id is not None and run_id != self.run_id:
                client.fail_run(run_id, _reason(failure))
        except GatehouseError:
            pass  # already ended (a cancelled run), or the server is out of reach: the original error matters more
        self._runs.pop(thread, None)

    def _run_sync(self, client: Client, thread: str, graph: Any, *, create: bool, new_thread: bool) -> str | None:
        """The thread's run: pinned, known, found by its session, or (with ``create``) started."""
        if self.run_id is not None or thread in self._runs:
            return self.run_id or self._runs[thread]
        session = session_for(thread)
        live = [] if new_thread else client.active_runs(session_id=session)
        if live:
            self._runs[thread] = str(live[0]["id"])
        elif create:
            self._runs[thread] = client.start_run(**self._new_run(thread, graph))
        return self._runs.get(thread)

    def _new_run(self, thread: str, graph: Any) -> dict[str, Any]:
        name = getattr(graph, "name", None) or "LangGraph"
        # "LangGraph" is the name of every graph compiled without one: say it once.
        label = "LangGraph" if name == "LangGraph" else f"LangGraph {name}"
        return {
            "run_input": {"thread_id": thread, "graph": name},
            "title": self.title or f"{label} · thread {thread}",
            "session_id": session_for(thread),
        }

    def _ask_sync(self, client: Client, run_id: str, thread: str, interrupt: Any, hold: float) -> _Asked:
        mapping = mapping_for(interrupt, self.mappers)
        return self._open_sync(client, run_id, thread, interrupt.id, mapping, mapping.gate(), 1, hold)

    def _open_sync(
        self,
        client: Client,
        run_id: str,
        thread: str,
        iid: str,
        mapping: Mapping,
        request: GateRequest,
        attempt: int,
        hold: float = 0.0,
    ) -> _Asked:
        key = idempotency_key(thread, iid, attempt)
        options = self._options(request)
        gate = client.open_gate(run_id, request.kind, request.text, wait=hold, idempotency_key=key, **options)
        self.gates_opened.append(gate)
        return _Asked(iid, mapping, attempt, gate, hold)

    def _answers_sync(
        self,
        client: Client,
        run_id: str,
        thread: str,
        asked: list[_Asked],
        pool: _LazyPool,
        waits: dict[str, Future[Gate]],
    ) -> list[tuple[_Asked, Any]]:
        """Waits until at least one interrupt has a usable answer; returns every answer ready by then."""
        pending = list(asked)
        while True:
            answers: list[tuple[_Asked, Any]] = []
            still: list[_Asked] = []
            for a in pending:
                gate = a.gate if not a.gate.pending else _done(waits.get(a.gate.id))
                if gate is None:
                    still.append(a)
                    continue
                waits.pop(a.gate.id, None)
                a.gate = gate
                outcome = self._settle(a, gate)
                if isinstance(outcome, GateRequest):
                    still.append(self._open_sync(client, run_id, thread, a.interrupt_id, a.mapping, outcome, a.attempt + 1))
                else:
                    answers.append((a, outcome))
            if answers:
                return answers
            pending = still
            open_gates = [a for a in pending if a.gate.pending]
            if len(open_gates) == 1 and not waits:
                # One question: wait on this thread, no pool needed.
                only = open_gates[0]
                only.gate = client.wait(only.gate.id, timeout=self._left(only))
                continue
            for a in open_gates:
                if a.gate.id not in waits:
                    waits[a.gate.id] = pool.submit(client.wait, a.gate.id, timeout=self._left(a))
            running = [waits[a.gate.id] for a in pending if a.gate.id in waits]
            if running:
                wait_futures(running, return_when=FIRST_COMPLETED)

    # Asyncio ------------------------------------------------------------------------

    async def ainvoke(self, graph: Any, input: Any, config: dict[str, Any], *, resume: bool = True) -> Any:
        """:meth:`invoke` for asyncio: ``graph.ainvoke`` and an :class:`~gatehouse.AsyncClient`."""
        client = self.client
        if not isinstance(client, AsyncClient):
            raise TypeError("ainvoke needs a gatehouse.AsyncClient; use invoke with a Client")
        thread = _thread_id(config)
        snapshot = await graph.aget_state(config)
        new_thread = not _has_checkpoint(snapshot)
        first, turn = _opening(snapshot, input, resume)
        marked = _marked(config, turn)
        output: Any = _SKIP
        run_id: str | None = None
        waits: dict[str, asyncio.Task[Gate]] = {}
        retries: dict[str, _Asked] = {}
        try:
            if first is not _SKIP:
                output = await graph.ainvoke(first, marked)
            while True:
                if _finished(output):
                    break
                pending = _interrupts_in(output)
                if pending is None:
                    snapshot = await graph.aget_state(config)
                    pending = snapshot.interrupts
                if not pending:
                    break
                run_id = run_id or await self._run_async(client, thread, graph, create=True, new_thread=new_thread)
                assert run_id is not None
                interrupts = _unique(pending)
                hold = self._hold(interrupts)
                asked: list[_Asked] = []
                for i in interrupts:
                    try:
                        asked.append(retries.pop(i.id, None) or await self._ask_async(client, run_id, thread, i, hold))
                    except Conflict:  # the run ended part-way: say what became of the gates asked
                        raise_if_withdrawn([await client.gate(a.gate.id) for a in asked])
                        raise
                answers = await self._answers_async(client, run_id, thread, asked, waits)
                try:
                    output = await graph.ainvoke(Command(resume={a.interrupt_id: v for a, v in answers}), marked)
                except _REFUSED as refused:
                    for a, _ in answers:
                        request = self._refusal(a, _first_line(refused))
                        retries[a.interrupt_id] = await self._open_async(
                            client, run_id, thread, a.interrupt_id, a.mapping, request, a.attempt + 1
                        )
        except Exception as failure:
            await self._end_failed_async(client, thread, graph, new_thread, failure)
            raise
        finally:
            for task in waits.values():
                task.cancel()
        if output is _SKIP:
            output = snapshot.values
        run_id = run_id or await self._run_async(client, thread, graph, create=False, new_thread=new_thread)
        if self.complete_run and run_id is not None and run_id != self.run_id:
            try:
                await client.complete_run(run_id, _jsonable(output))
            except Conflict:
                pass
            self._runs.pop(thread, None)
        return output

    async def _end_failed_async(
        self, client: AsyncClient, thread: str, graph: Any, new_thread: bool, failure: Exception
    ) -> None:
        if isinstance(failure, Timeout):
            return
        try:
            run_id = await self._run_async(client, thread, graph, create=False, new_thread=new_thread)
            if run_id is not None and run_id != self.run_id:
                await client.fail_run(run_id, _reason(failure))
        except GatehouseError:
            pass
        self._runs.pop(thread, None)

    async def _run_async(
        self, client: AsyncClient, thread: str, graph: Any, *, create: bool, new_thread: bool
    ) -> str | None:
        if self.run_id is not None or thread in self._runs:
            return self.run_id or self._runs[thread]
        session = session_for(thread)
        live = [] if new_thread else await client.active_runs(session_id=session)
        if live:
            self._runs[thread] = str(live[0]["id"])
        elif create:
            self._runs[thread] = await client.start_run(**self._new_run(thread, graph))
        return self._runs.get(thread)

    async def _ask_async(self, client: AsyncClient, run_id: str, thread: str, interrupt: Any, hold: float) -> _Asked:
        mapping = mapping_for(interrupt, self.mappers)
        return await self._open_async(client, run_id, thread, interrupt.id, mapping, mapping.gate(), 1, hold)

    async def _open_async(
        self,
        client: AsyncClient,
        run_id: str,
        thread: str,
        iid: str,
        mapping: Mapping,
        request: GateRequest,
        attempt: int,
        hold: float = 0.0,
    ) -> _Asked:
        key = idempotency_key(thread, iid, attempt)
        gate = await client.open_gate(
            run_id, request.kind, request.text, wait=hold, idempotency_key=key, **self._options(request)
        )
        self.gates_opened.append(gate)
        return _Asked(iid, mapping, attempt, gate, hold)

    async def _answers_async(
        self, client: AsyncClient, run_id: str, thread: str, asked: list[_Asked], waits: dict[str, asyncio.Task[Gate]]
    ) -> list[tuple[_Asked, Any]]:
        pending = list(asked)
        while True:
            answers: list[tuple[_Asked, Any]] = []
            still: list[_Asked] = []
            for a in pending:
                task = waits.get(a.gate.id)
                gate = a.gate if not a.gate.pending else (task.result() if task and task.done() else None)
                if gate is None:
                    still.append(a)
                    continue
                waits.pop(a.gate.id, None)
                a.gate = gate
                outcome = self._settle(a, gate)
                if isinstance(outcome, GateRequest):
                    retry = await self._open_async(client, run_id, thread, a.interrupt_id, a.mapping, outcome, a.attempt + 1)
                    still.append(retry)
                else:
                    answers.append((a, outcome))
            if answers:
                return answers
            pending = still
            for a in pending:
                if a.gate.pending and a.gate.id not in waits:
                    waits[a.gate.id] = asyncio.create_task(client.wait(a.gate.id, timeout=self._left(a)))
            running = [waits[a.gate.id] for a in pending if a.gate.id in waits]
            if running:
                await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)

    # Shared -------------------------------------------------------------------------

    def _options(self, request: GateRequest) -> dict[str, Any]:
        """The gate's options; an approval may be passed by a reviewer's allow-rule with ``allow_rules``."""
        options = request.options()
        if self.allow_rules and request.kind == "approval":
            options.pop("requires_human", None)
        return options

    def _hold(self, interrupts: list[Any]) -> float:
        """How long the opening request waits for the decision: a lone
        interrupt's gate is opened and waited on in one request; several are
        opened at once (holding each open in turn would ask them one by one)."""
        if len(interrupts) != 1:
            return 0.0
        return POLL_SECONDS if self.timeout is None else min(POLL_SECONDS, self.timeout)

    def _left(self, asked: _Asked) -> float | None:
        """What is left of ``timeout`` for the long poll after the opening request's hold."""
        return None if self.timeout is None else max(0.0, self.timeout - asked.held)

    def _settle(self, asked: _Asked, gate: Gate) -> Any:
        """The resume value for a closed gate, or the request asking again."""
        settle_closed(gate)  # expired or cancelled: nothing to resume with
        try:
            return asked.mapping.resume(gate)
        except AnswerInvalid as problem:
            if asked.attempt >= self.max_attempts:
                raise GatehouseError(
                    f"interrupt {asked.interrupt_id}: no usable answer after {asked.attempt} gates; last: {problem}"
                ) from problem
            return asked.mapping.retry(gate, str(problem))

    def _refusal(self, asked: _Asked, problem: str) -> GateRequest:
        """The gate asking again after the graph itself refused ``asked``'s answer."""
        if asked.attempt >= self.max_attempts:
            raise GatehouseError(
                f"interrupt {asked.interrupt_id}: no usable answer after {asked.attempt} gates; last: {problem}"
            )
        return asked.mapping.retry(asked.gate, problem)


class _LazyPool:
    """A thread pool made only when two or more gates are waited on at once."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None

    def submit(self, fn: Any, *args: Any, **kwargs: Any) -> Future[Gate]:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="gatehouse-wait")
        return self._pool.submit(fn, *args, **kwargs)

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


def _done(future: Future[Gate] | None) -> Gate | None:
    if future is None or not future.done():
        return None
    return future.result()


def _unique(interrupts: Any) -> list[Any]:
    seen: dict[str, Any] = {}
    for i in interrupts:
        seen.setdefault(i.id, i)
    return list(seen.values())


def _thread_id(config: dict[str, Any]) -> str:
    try:
        return str(config["configurable"]["thread_id"])
    except (KeyError, TypeError):
        raise ValueError("config needs configurable.thread_id: interrupts are resumed per thread") from None


_SKIP = object()
"""Nothing to start the graph with: it waits at interrupts, or has done this turn."""

INPUT_MARK = "gatehouse_input"
"""Checkpoint metadata naming (by digest) the input that started the thread's current turn."""


def _digest(input: Any) -> str:
    return hashlib.sha256(json.dumps(input, sort_keys=True, default=repr).encode()).hexdigest()[:32]


def _opening(snapshot: Any, input: Any, resume: bool) -> tuple[Any, str | None]:
    """What the graph starts with (``_SKIP`` for nothing), and the digest of the turn's input.

    Every checkpoint the adapter writes carries its turn's input digest, so
    a restarted process passing its input again is told apart from a new
    message on the same thread.
    """
    if not resume or not _has_checkpoint(snapshot):
        return input, _digest(input)
    turn = (snapshot.metadata or {}).get(INPUT_MARK)
    if snapshot.interrupts:
        return _SKIP, turn  # waiting: its interrupts are asked (or found again) first
    if input is not None and _digest(input) != turn:
        return input, _digest(input)  # a new input on a thread at rest: its next turn
    if snapshot.next:
        return None, turn  # it stopped between steps: carry on
    return _SKIP, turn


def _marked(config: dict[str, Any], turn: str | None) -> dict[str, Any]:
    if turn is None:
        return config
    return {**config, "metadata": {**(config.get("metadata") or {}), INPUT_MARK: turn}}


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return "; ".join(lines[:4])[:500]


def _reason(failure: BaseException) -> str:
    return f"the LangGraph adapter stopped: {type(failure).__name__}: {_first_line(failure)}"[:1000]


def _finished(output: Any) -> bool:
    """Whether what ``graph.invoke`` returned says the graph stopped at no interrupt.

    LangGraph's ``invoke`` returns its final values with the interrupts it
    stopped at under ``__interrupt__``; values without that key mean it ran
    to the end, so the checkpoint need not be read again to learn that.
    Anything else (nothing invoked yet, a value that is not a dict) is
    checked against the checkpoint.
    """
    return isinstance(output, dict) and _INTERRUPT_KEY not in output


_INTERRUPT_KEY = "__interrupt__"


def _interrupts_in(output: Any) -> list[Any] | None:
    """The interrupts ``graph.invoke`` returned under ``__interrupt__``, or
    None when it returned none to read (nothing invoked yet, a value that is
    not a dict, entries without an id): the checkpoint is read then.

    They are the ones the checkpoint holds after that call (LangGraph puts
    every interrupt the step stopped at there, a subgraph's included), so a
    checkpoint read per interrupt is saved.
    """
    if not isinstance(output, dict):
        return None
    interrupts = output.get(_INTERRUPT_KEY)
    if not isinstance(interrupts, (list, tuple)) or not all(isinstance(getattr(i, "id", None), str) for i in interrupts):
        return None
    return list(interrupts)


def _has_checkpoint(snapshot: Any) -> bool:
    return snapshot is not None and snapshot.created_at is not None


def _jsonable(values: Any) -> Any:
    try:
        return json.loads(json.dumps(values, default=str))
    except (TypeError, ValueError):
        return None


def _ignore_conflict(call: Any) -> None:
    try:
        call()
    except Conflict:
        pass  # already completed by an earlier process, or not completable now
