"""An OpenAI Agents SDK agent for the tests: a ``deploy`` tool that needs
approval, and a scripted model (the SDK's own ``ScriptedModel``, no network)
that calls it once and then answers with what the tool said.

Run as a process by the restart test::

    python openai_agents_agent.py URL TOKEN STATE_DIR CONVERSATION RAN_FILE

Prints ``asking`` before it runs, and the final output at the end; appends
each tool run to RAN_FILE.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from agents import Agent, ModelSettings, RunConfig, function_tool
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from gatehouse import AsyncClient
from gatehouse.openai_agents import GatehouseApprovals

NO_TRACING = RunConfig(tracing_disabled=True)


def tool_output(call: ModelCall) -> str | None:
    """What the tool told the model, once it ran (or was refused)."""
    items = call.input if isinstance(call.input, list) else []
    outputs = [i.get("output") for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
    return str(outputs[-1]) if outputs else None


def scripted_model() -> ScriptedModel:
    """Calls ``deploy`` first, then reports the tool's output: whichever call of the run it is."""

    def respond(call: ModelCall) -> list[Any]:
        said = tool_output(call)
        if said is None:
            return [function_call("deploy", {"service": "api", "version": "1.2"}, call_id="call-deploy")]
        return [assistant_message(f"Done: {said}")]

    return ScriptedModel([ModelStep.respond(respond), ModelStep.respond(respond)])


def deploy_agent(ran: list[dict[str, str]]) -> Agent[Any]:
    @function_tool(needs_approval=True)
    def deploy(service: str, version: str) -> str:
        """Deploy a service at a version."""
        ran.append({"service": service, "version": version})
        return f"deployed {service}@{version}"

    return Agent(name="ops", instructions="Ship what is asked.", model=scripted_model(), tools=[deploy],
                 model_settings=ModelSettings())


async def main() -> None:
    url, token, state_dir, conversation, ran_file = sys.argv[1:6]
    ran: list[dict[str, str]] = []
    print("asking", flush=True)
    async with AsyncClient(url, token=token) as gh:
        approvals = GatehouseApprovals(gh, state_dir=state_dir)
        result = await approvals.run(deploy_agent(ran), "Ship api 1.2", conversation_id=conversation,
                                     run_config=NO_TRACING)
    with Path(ran_file).open("a") as out:
        for r in ran:
            out.write(f"{r['service']}@{r['version']}\n")
    print(result.final_output, flush=True)


if __name__ == "__main__":
    asyncio.run(main())
