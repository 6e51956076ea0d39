"""An OpenAI Agents SDK agent whose `deploy` tool needs a person's approval in Gatehouse.

    python agent.py "Ship web 1.4.2"

`deploy` is a function tool with `needs_approval=True`; each call becomes
a Gatehouse approval gate (its arguments as payload), and the agent runs it
once a reviewer approves, or tells the model the reviewer's reason when
they reject. Without `--model` the SDK's own `ScriptedModel` plays the LLM
(it asks to deploy, then reports what the tool said), so it runs with no API
key; with `--model gpt-4o-mini` (and OPENAI_API_KEY) a real model decides.
The run state is saved in `--state-dir` while it waits: kill the agent and
rerun it with the same `--conversation`, and it picks up the same gate.
`--url`/`GATEHOUSE_URL` and `--token`/`GATEHOUSE_TOKEN` name the server
and an agent token.
"""

from __future__ import annotations

import argparse
import asyncio
import uuid
from typing import Any

from agents import Agent, RunConfig, function_tool
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from gatehouse import AsyncClient
from gatehouse.openai_agents import GatehouseApprovals


@function_tool(needs_approval=True)
def deploy(service: str, version: str, env: str) -> str:
    """Deploy a version of a service to an environment."""
    return f"deployed {service} {version} to {env}"


def scripted() -> ScriptedModel:
    """Asks to deploy web 1.4.2 to production, then reports what the tool said (from any step)."""

    def respond(call: ModelCall) -> list[Any]:
        items = call.input if isinstance(call.input, list) else []
        said = [i.get("output") for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
        if said:
            return [assistant_message(f"Done: {said[-1]}")]
        args = {"service": "web", "version": "1.4.2", "env": "production"}
        return [function_call("deploy", args, call_id="call_deploy")]

    return ScriptedModel([ModelStep.respond(respond), ModelStep.respond(respond)])


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("request", nargs="?", default="Ship web 1.4.2 to production")
    parser.add_argument("--model", help="an OpenAI model name; default: the scripted model")
    parser.add_argument("--conversation", default=None, help="the conversation to start or continue")
    parser.add_argument("--state-dir", default="openai_agent_state")
    parser.add_argument("--url")
    parser.add_argument("--token")
    args = parser.parse_args()

    agent = Agent(name="deploy agent", instructions="You operate deployments. Use the tools.",
                  model=args.model or scripted(), tools=[deploy])
    conversation = args.conversation or f"deploy-{uuid.uuid4().hex[:8]}"
    print(f"conversation {conversation}: waiting for a reviewer in Gatehouse…", flush=True)
    async with AsyncClient(args.url, token=args.token) as gh:
        approvals = GatehouseApprovals(gh, state_dir=args.state_dir, title=f"deploy agent: {args.request}")
        result = await approvals.run(agent, args.request, conversation_id=conversation,
                                     run_config=RunConfig(tracing_disabled=args.model is None))
    print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
