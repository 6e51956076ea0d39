"""`/mcp`'s door as the official Python SDK sees it: a refused token
surfaces as an error saying why (no token, or an unknown or revoked one),
and a session closes without the SDK logging a failed termination."""

from __future__ import annotations

import logging

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from conftest import WAIT, mcp_session

pytestmark = pytest.mark.anyio


async def refusal(server, headers: dict[str, str]) -> BaseException:
    """What the SDK raises when it initializes a session with `headers`."""
    with anyio.fail_after(WAIT):
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(WAIT)) as http:
            with pytest.raises(BaseException) as raised:
                async with streamable_http_client(f"{server.url}/mcp", http_client=http) as (read, write):
                    async with ClientSession(read, write, read_timeout_seconds=WAIT) as session:
                        await session.initialize()
    return raised.value


def said(error: BaseException) -> str:
    """The text of `error` and of any it groups."""
    if isinstance(error, BaseExceptionGroup):
        return " | ".join(said(e) for e in error.exceptions)
    return f"{type(error).__name__}: {error}"


async def test_an_unknown_token_is_refused_saying_so(server):
    text = said(await refusal(server, {"Authorization": "Bearer not-a-token"}))
    print(f"the SDK says: {text}")
    assert "this token is unknown or revoked" in text, text
    assert "Server returned an error response" not in text, text


async def test_a_missing_token_is_refused_saying_one_is_required(server):
    text = said(await refusal(server, {}))
    print(f"the SDK says: {text}")
    assert "a bearer token is required" in text, text
    assert "Server returned an error response" not in text, text


async def test_a_session_closes_without_a_failed_termination(server, caplog):
    caplog.set_level(logging.DEBUG, logger="mcp")
    with anyio.fail_after(WAIT):
        async with mcp_session(server, "http") as session:
            assert (await session.list_tools()).tools
    records = [r.getMessage() for r in caplog.records]
    assert not [m for m in records if "Session termination failed" in m], records
    assert not [m for m in records if "does not allow session termination" in m], records
