"""A Pydantic AI agent whose `deploy` tool needs a person's approval in Gatehouse.

    python agent.py "Ship web 1.4.2"

`deploy` is registered with `requires_approval=True`, so the agent's run
ends with `DeferredToolRequests`; each call becomes a Gatehouse approval
gate, and the reviewer's decision goes back as `DeferredToolResults`:
approve, edit the arguments (`ToolApproved(override_args=...)`) or reject
with a reason (`ToolDenied`). Without `--model` a `FunctionModel` plays the
LLM, so it runs with no API key; with `--model openai:gpt-4o-mini` (its
provider package installed) a real model decides. `--url`/`GATEHOUSE_URL`
and `--token`/`GATEHOUSE_TOKEN` name the server and an agent token.
"""

from __future__ import annotations

import argparse
import asyncio
import uuid
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from gatehouse import AsyncClient
from gatehouse.pydantic_ai import GatehouseApprovals


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Asks to deploy web 1.4.2 to production, then reports what the tool said."""
    said = [p.content for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
    if said:
        return ModelResponse(parts=[TextPart(f"Done: {said[-1]}")])
    args = {"service": "web", "version": "1.4.2", "env": "production"}
    return ModelResponse(parts=[ToolCallPart("deploy", args, tool_call_id="call_deploy")])


def build_agent(model: Any) -> Agent[None, Any]:
    agent: Agent[None, Any] = Agent(model, output_type=[str, DeferredToolRequests], name="deploy agent",
                                    instructions="You operate deployments. Use the tools.")

    @agent.tool_plain(requires_approval=True)
    def deploy(service: str, version: str, env: str) -> str:
        """Deploy a version of a service to an environment."""
        return f"deployed {service} {version} to {env}"

    return agent


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("request", nargs="?", default="Ship web 1.4.2 to production")
    parser.add_argument("--model", help="a Pydantic AI model name; default: the scripted model")
    parser.add_argument("--url")
    parser.add_argument("--token")
    args = parser.parse_args()

    agent = build_agent(args.model or FunctionModel(scripted))
    conversation = f"deploy-{uuid.uuid4().hex[:8]}"
    print(f"conversation {conversation}: waiting for a reviewer in Gatehouse…", flush=True)
    async with AsyncClient(args.url, token=args.token) as gh:
        approvals = GatehouseApprovals(gh, title=f"deploy agent: {args.request}")
        result = await approvals.run(agent, args.request, conversation_id=conversation)
    print(result.output)


if __name__ == "__main__":
    asyncio.run(main())
