"""Gatehouse for Python agents: put a human reviewer in front of what an agent does.

- :class:`Client` and :class:`AsyncClient` wrap the agent API under
  ``/api/hitl``: runs, turns and directives, gates of every kind and waiting
  for their decisions, the HITL tools ``request_approval``, ``escalate_to_human``
  and ``request_feedback``, the plan and shared context, and the event stream.
- :func:`requires_approval` puts a function behind a reviewer's approval.
- :mod:`gatehouse.langgraph` runs a LangGraph graph with Gatehouse as the human
  answering its ``interrupt()`` calls; :mod:`gatehouse.openai_agents`,
  :mod:`gatehouse.pydantic_ai` and :mod:`gatehouse.claude_agent_sdk` put the
  tool approvals of those frameworks' agents in Gatehouse.

Five lines::

    from gatehouse import Client
    gh = Client("http://127.0.0.1:7777", token="<agent token>")
    run = gh.start_run({"task": "deploy"}, title="deploy")
    decision = gh.request_approval(run, "deploy build 42 to prod", context={"build": 42})
    print(decision.action, decision.payload)   # Rejected is raised if the reviewer said no
"""

from ._http import Retry
from .aio import AsyncClient
from .approval import requires_approval
from .client import Client
from .errors import (
    AuthError,
    Cancelled,
    Conflict,
    ConnectionFailed,
    Expired,
    GatehouseError,
    GateOutcome,
    InvalidRequest,
    NotFound,
    Rejected,
    Released,
    ServerError,
    Timeout,
)
from .models import Decision, Event, Gate

__all__ = [
    "AsyncClient",
    "AuthError",
    "Cancelled",
    "Client",
    "Conflict",
    "ConnectionFailed",
    "Decision",
    "Event",
    "Expired",
    "Gate",
    "GateOutcome",
    "GatehouseError",
    "InvalidRequest",
    "NotFound",
    "Rejected",
    "Released",
    "Retry",
    "ServerError",
    "Timeout",
    "requires_approval",
]

__version__ = "0.1.0"
