"""A Claude Agent SDK session whose tool permissions are decided in Gatehouse.

    python agent.py "Clean the build directory"            # a real session: needs the Claude CLI and a key
    python agent.py --offline                              # one permission request, as the SDK sends it

`GatehousePermissions` is the session's `can_use_tool`: each permission
request Claude Code raises (run a command, write a file...) becomes a
Gatehouse approval gate with the tool input as payload. Approve it and the
tool runs as asked; edit the input and it runs as edited; reject it with a
reason and Claude reads the reason. `--offline` skips the model and asks
one request for `Bash` (`rm -rf build/`) the way the SDK would, printing
the SDK's answer. `--url`/`GATEHOUSE_URL` and `--token`/`GATEHOUSE_TOKEN`
name the server and an agent token.
"""

from __future__ import annotations

import argparse
import asyncio
import uuid

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ToolPermissionContext

from gatehouse import AsyncClient
from gatehouse.claude_agent_sdk import GatehousePermissions


async def session(permissions: GatehousePermissions, request: str) -> None:
    options = ClaudeAgentOptions(can_use_tool=permissions, allowed_tools=["Read", "Glob"])
    async with ClaudeSDKClient(options=options) as claude:
        await claude.query(request)
        async for message in claude.receive_response():
            print(message, flush=True)


async def offline(permissions: GatehousePermissions) -> None:
    context = ToolPermissionContext(tool_use_id=f"toolu_{uuid.uuid4().hex[:12]}",
                                    title="Claude wants to run rm -rf build/",
                                    description="Removes the build directory")
    print(await permissions("Bash", {"command": "rm -rf build/"}, context), flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("request", nargs="?", default="Clean the build directory")
    parser.add_argument("--offline", action="store_true", help="ask one sample request instead of running Claude")
    parser.add_argument("--url")
    parser.add_argument("--token")
    args = parser.parse_args()

    conversation = f"claude-{uuid.uuid4().hex[:8]}"
    print(f"conversation {conversation}: tool permissions go to Gatehouse…", flush=True)
    async with AsyncClient(args.url, token=args.token) as gh:
        permissions = GatehousePermissions(gh, conversation_id=conversation, title=f"Claude: {args.request}")
        try:
            await (offline(permissions) if args.offline else session(permissions, args.request))
        except BaseException as failure:
            await permissions.fail(failure)
            raise
        await permissions.finish()


if __name__ == "__main__":
    asyncio.run(main())
