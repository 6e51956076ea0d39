"""A LangGraph agent whose tool calls need a person's approval in Gatehouse.

The agent (langchain's `create_agent`) may call three tools; `deploy` and
`rollback` are behind langchain's HumanInTheLoopMiddleware, `post_status`
is not. Each model turn's gated calls become one Gatehouse gate proposing
each call; the reviewer approves, edits or rejects each there (or all at
once), and the agent runs exactly what was approved.

    python agent.py "Ship web 1.4.2 to production and tell the team"

Without `--model` a scripted model plays the LLM (it asks to deploy, then
to post a status), so the example runs with no API key; with `--model
openai:gpt-4o-mini` (or any `init_chat_model` name, its package installed)
a real one decides. `--url`/`GATEHOUSE_URL` and `--token`/`GATEHOUSE_TOKEN`
name the server and an agent token. Checkpoints are kept in SQLite
(`--checkpoints`): kill it while it waits and run it again with the same
`--thread`, and it picks up the same gate.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import uuid
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver

from gatehouse import Client
from gatehouse.langgraph import GatehouseHuman


@tool
def deploy(service: str, version: str, env: str) -> str:
    """Deploy a version of a service to an environment."""
    return f"deployed {service} {version} to {env}"


@tool
def rollback(service: str, env: str) -> str:
    """Roll a service back to its previous version."""
    return f"rolled {service} back in {env}"


@tool
def post_status(message: str) -> str:
    """Post a status message to the team channel."""
    return f"posted: {message}"


class ScriptedModel(GenericFakeChatModel):
    """Stands in for an LLM: replays its messages, whatever tools it is given."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def scripted(request: str) -> ScriptedModel:
    return ScriptedModel(messages=iter([
        AIMessage(content="", tool_calls=[
            {"name": "deploy", "args": {"service": "web", "version": "1.4.2", "env": "production"}, "id": "call_deploy"},
            {"name": "post_status", "args": {"message": "web 1.4.2 is going to production"}, "id": "call_status"},
        ]),
        AIMessage(content=f"Done: {request}"),
    ]))


def build_agent(model: Any, checkpointer: Any) -> Any:
    return create_agent(
        model,
        tools=[deploy, rollback, post_status],
        system_prompt="You operate deployments. Use the tools.",
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={
                    "deploy": True,  # approve, edit, reject or respond
                    "rollback": {"allowed_decisions": ["approve", "reject"]},
                },
                description_prefix="The deploy agent wants to run a tool",
            )
        ],
        checkpointer=checkpointer,
        name="deploy_agent",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("request", nargs="?", default="Ship web 1.4.2 to production and tell the team")
    parser.add_argument("--model", help="an init_chat_model name; default: the scripted model")
    parser.add_argument("--thread", default=None, help="the conversation to start or continue (default: a new one)")
    parser.add_argument("--checkpoints", default="deploy_agent_checkpoints.sqlite")
    parser.add_argument("--url")
    parser.add_argument("--token")
    args = parser.parse_args()

    if args.model:
        from langchain.chat_models import init_chat_model

        model = init_chat_model(args.model)
    else:
        model = scripted(args.request)
    agent = build_agent(model, SqliteSaver(sqlite3.connect(args.checkpoints, check_same_thread=False)))
    thread = args.thread or f"deploy-{uuid.uuid4().hex[:8]}"
    print(f"thread {thread}: waiting for a reviewer in Gatehouse…", flush=True)
    with Client(args.url, token=args.token) as gh:
        final = GatehouseHuman(gh, title=f"deploy agent: {args.request}").invoke(
            agent, {"messages": [{"role": "user", "content": args.request}]}, {"configurable": {"thread_id": thread}}
        )
    for message in final["messages"]:
        if isinstance(message, ToolMessage):
            print(json.dumps({"tool": message.name, "status": message.status, "result": message.content}))
    print(final["messages"][-1].content)


if __name__ == "__main__":
    main()
