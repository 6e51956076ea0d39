"""A small MCP server written with the official Python SDK for the team
tools interop test (test_team_tools.py): `gatehouse serve --team-tools`
starts it over stdio, discovers its one tool at start and offers it to a
team's agents as `words.word_count`."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("words")


@server.tool()
def word_count(text: str) -> str:
    """Count the words of a text."""
    return f"{len(text.split())} words"


if __name__ == "__main__":
    server.run("stdio")
