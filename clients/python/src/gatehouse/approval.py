"""``@requires_approval``: a function that runs only once a reviewer approves the call.

The call's arguments, by parameter name, are the gate's payload. The
reviewer may approve (the call runs as made), edit the payload (the call
runs with the edited arguments) or reject (:class:`~gatehouse.Rejected` is
raised and the function never runs)::

    @requires_approval(gh, run=run_id)
    def deploy(build: int, env: str = "staging") -> str: ...

    deploy(42, env="prod")   # blocks until decided; a reviewer may change env back to staging

Async functions work the same way (with either client).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
from collections.abc import Callable
from typing import Any, TypeVar, cast

from .aio import AsyncClient
from .client import Client
from .errors import GatehouseError, Rejected
from .models import Decision

F = TypeVar("F", bound=Callable[..., Any])

RunSource = str | Callable[[], str] | None


def requires_approval(
    client: Client | AsyncClient,
    *,
    run: RunSource = None,
    action: str | None = None,
    text: str | Callable[..., str] | None = None,
    timeout: float | None = None,
    idempotency_key: Callable[..., str] | None = None,
    exclude: tuple[str, ...] = ("self", "cls"),
    **tool_options: Any,
) -> Callable[[F], F]:
    """Puts the decorated function behind a reviewer's approval.

    ``run`` is a run id, a function returning one, or ``None`` to start a
    run (titled after the function) on the first call. ``action`` names the
    action for the reviewer (default: the function's qualified name);
    ``text`` is the request's markdown, or a function of the call's
    arguments returning it. ``timeout`` bounds the wait
    (:class:`~gatehouse.Timeout`). ``idempotency_key``, a function of the
    call's arguments, makes a repeated call (say, after a restart) find the
    first call's gate instead of asking again. Parameters named in
    ``exclude`` are passed through but not shown. Other keyword arguments
    (``urgency``, ``expires_in``, ``mode``, ``task``) go to
    ``request_approval``.
    """

    def decorate(func: F) -> F:
        signature = inspect.signature(func)
        is_async = inspect.iscoroutinefunction(func)
        if isinstance(client, AsyncClient) and not is_async:
            raise TypeError(f"{func.__qualname__} is not async: use a gatehouse.Client to guard it")
        name = action or func.__qualname__
        state: dict[str, str] = {}

        def prepare(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[inspect.BoundArguments, dict[str, Any]]:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            payload = {k: v for k, v in bound.arguments.items() if k not in exclude}
            try:
                json.dumps(payload)
            except (TypeError, ValueError) as e:
                raise TypeError(f"{func.__qualname__}: the arguments must be JSON to be reviewed: {e}") from e
            return bound, payload

        def request(bound: inspect.BoundArguments, payload: dict[str, Any]) -> dict[str, Any]:
            options = dict(tool_options)
            if idempotency_key is not None:
                options["idempotency_key"] = idempotency_key(*bound.args, **bound.kwargs)
            body = text(*bound.args, **bound.kwargs) if callable(text) else text
            return {"action": name, "context": payload, "text": body, "timeout": timeout, **options}

        def run_id_sync() -> str:
            if isinstance(run, str):
                return run
            if callable(run):
                return run()
            if "run" not in state:
                assert isinstance(client, Client)
                state["run"] = client.start_run({"function": func.__qualname__}, title=func.__qualname__)
            return state["run"]

        async def run_id_async() -> str:
            if isinstance(run, str):
                return run
            if callable(run):
                return run()
            if "run" not in state:
                if isinstance(client, AsyncClient):
                    state["run"] = await client.start_run({"function": func.__qualname__}, title=func.__qualname__)
                else:
                    state["run"] = await asyncio.to_thread(run_id_sync)
            return state["run"]

        if is_async:

            @functools.wraps(func)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                bound, payload = prepare(args, kwargs)
                run_id = await run_id_async()
                if isinstance(client, AsyncClient):
                    decision = await client.request_approval(run_id, **request(bound, payload))
                else:
                    call = functools.partial(client.request_approval, run_id, **request(bound, payload))
                    decision = await asyncio.to_thread(call)
                edited = apply_decision(func, signature, bound, decision, exclude)
                return await func(*edited.args, **edited.kwargs)

            return cast(F, async_wrapper)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound, payload = prepare(args, kwargs)
            assert isinstance(client, Client)
            decision = client.request_approval(run_id_sync(), **request(bound, payload))
            edited = apply_decision(func, signature, bound, decision, exclude)
            return func(*edited.args, **edited.kwargs)

        return cast(F, wrapper)

    return decorate


def apply_decision(
    func: Callable[..., Any],
    signature: inspect.Signature,
    bound: inspect.BoundArguments,
    decision: Decision,
    exclude: tuple[str, ...],
) -> inspect.BoundArguments:
    """The arguments to call with: as bound, or with the reviewer's edit applied.

    An edit's payload names parameters; a parameter it leaves out keeps the
    call's value. Naming a parameter the function does not have (and no
    ``**kwargs`` to take it) raises rather than silently dropping the edit.
    """
    if decision.action == "approve":
        return bound
    if decision.action != "edit":
        gate_id = decision.gate_id
        raise Rejected(
            f"gate {gate_id}: `{decision.action}` does not approve the call to {func.__qualname__}",
            gate=_gate_stub(decision),
            decision=decision,
        )
    edited = decision.payload
    if not isinstance(edited, dict):
        raise GatehouseError(f"{func.__qualname__}: the reviewer's edit is not an object of arguments: {edited!r}")
    params = signature.parameters
    var_kw = next((p.name for p in params.values() if p.kind is inspect.Parameter.VAR_KEYWORD), None)
    arguments = dict(bound.arguments)
    for key, value in edited.items():
        if key in exclude:
            continue
        if key in params:
            arguments[key] = value
        elif var_kw is not None:
            arguments[var_kw] = {**arguments.get(var_kw, {}), key: value}
        else:
            raise GatehouseError(f"{func.__qualname__}: the reviewer's edit names `{key}`, which is not a parameter")
    return inspect.BoundArguments(signature, arguments)


def _gate_stub(decision: Decision) -> Any:
    """The gate for an exception raised from a decision alone (its id and the decision)."""
    from .models import Gate

    return Gate.from_json(
        {"id": decision.gate_id, "run_id": decision.run_id, "status": "resolved", "decision": decision.raw}
    )
