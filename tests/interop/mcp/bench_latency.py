"""How long a reviewer's decision takes to reach an MCP tool call that is
waiting for it: from the moment `POST /gates/{id}/resolve` returns (the
decision is committed) to the moment the SDK's `call_tool` returns, over
stdio (`gatehouse mcp`, a separate process talking to `gatehouse serve`)
and over streamable HTTP (`/mcp`). Bounded, loopback only.

    target/pyenv/bin/python tests/interop/mcp/bench_latency.py [--samples 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).parent))
from conftest import Server, _token, mcp_session, serve, stop  # noqa: E402


def reviewer(server: Server, committed: list[float], samples: int) -> None:
    """Approves each gate as soon as it is pending, noting when each decision was committed."""
    decided = 0
    deadline = time.monotonic() + 60 + samples
    while decided < samples and time.monotonic() < deadline:
        gates = server.api("GET", "/gates")["gates"]
        if not gates:
            time.sleep(0.002)
            continue
        time.sleep(0.05)  # the call is waiting by now
        server.api("POST", f"/gates/{gates[0]['id']}/resolve", {"action": "approve"})
        committed.append(time.monotonic())
        decided += 1


async def measure(server: Server, transport: str, samples: int) -> list[float]:
    committed: list[float] = []
    arrived: list[float] = []
    thread = threading.Thread(target=reviewer, args=(server, committed, samples), daemon=True)
    async with mcp_session(server, transport, client_name=f"bench-{transport}") as session:
        thread.start()
        for i in range(samples):
            with anyio.fail_after(30):
                result = await session.call_tool("request_approval", {"action": f"step {i}"})
            arrived.append(time.monotonic())
            assert result.structured_content["decision"] == "approve", result
    thread.join(timeout=30)
    return [(a - c) * 1000 for a, c in zip(arrived, committed)]


def report(name: str, ms: list[float]) -> None:
    ordered = sorted(ms)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    print(f"{name:6} n={len(ms)}  median {statistics.median(ms):6.1f} ms  p95 {p95:6.1f} ms  max {max(ms):6.1f} ms")


async def main(samples: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        agent, alice = _token(db, "agent", "bench"), _token(db, "reviewer", "alice")
        process, url = serve(db)
        try:
            server = Server(url=url, db=db, agent_token=agent, reviewer_token=alice)
            for transport in ("stdio", "http"):
                report(transport, await measure(server, transport, samples))
        finally:
            stop(process)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50)
    anyio.run(main, parser.parse_args().samples)
