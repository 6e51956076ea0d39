"""Sends one permission prompt through `gatehouse mcp`, as a coding assistant
would with `--permission-prompt-tool mcp__gatehouse__request_permission`,
and prints the answer once a reviewer decides in Gatehouse.

    GATEHOUSE_TOKEN=<agent token> python examples/mcp/permission_prompt.py "rm -rf build"

Needs the `mcp` package (pip install mcp) and a running Gatehouse (the
desktop app or `gatehouse serve`); GATEHOUSE_URL and GATEHOUSE_BIN point
elsewhere than http://127.0.0.1:7777 and `gatehouse` on the PATH.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import Implementation


async def main(command: str) -> int:
    server = StdioServerParameters(
        command=os.environ.get("GATEHOUSE_BIN", "gatehouse"),
        args=["mcp"],
        env={key: os.environ[key] for key in ("GATEHOUSE_TOKEN", "GATEHOUSE_URL") if key in os.environ},
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, client_info=Implementation(name="permission-demo", version="1")) as session:
            await session.initialize()
            print("Waiting for a reviewer in Gatehouse...", file=sys.stderr)
            result = await session.call_tool(
                "request_permission",
                {"tool_name": "Bash", "input": {"command": command}, "tool_use_id": f"demo-{os.getpid()}"},
            )
    answer = json.loads(result.content[0].text)
    print(json.dumps(answer))
    return 0 if answer["behavior"] == "allow" else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "ls")))
