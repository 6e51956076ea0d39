"""A gate an allow-rule passes as it opens, against one or more server binaries, hot and after idling.

Each binary gets its own server, run and allow-rule (as `checkpoint_overhead.py
--approver rule` makes them); the servers take turns, one open each per round
in an order shuffled each round (seeded), so load from other processes falls
on all alike. With `--pause-ms`, the client sleeps that long before each open,
as an agent does while LangGraph runs its node: the server's threads have gone
idle, and every handoff between them (and the client) waits for a thread to
wake, which on a VM can cost far more than on a busy loop.

    target/pyenv/bin/python clients/python/bench/open_after_idle.py \\
        --binary /tmp/gatehouse-before --binary target/release/gatehouse --pause-ms 0 --pause-ms 10
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import time
import uuid
from pathlib import Path

from checkpoint_overhead import ACTION, AGENT, REPO, allow_the_action, start_server

from gatehouse import Client


def open_passed(gh: Client, run: str) -> float:
    """One held open the allow-rule passes; its time in ms."""
    t0 = time.perf_counter()
    gate = gh.open_gate(run, "approval", "Go ahead?", spec={"action": ACTION}, payload={"step": 1},
                        allowed_actions=["approve", "reject"], wait=50, idempotency_key=uuid.uuid4().hex)
    took = (time.perf_counter() - t0) * 1000
    assert gate.decision is not None and gate.decision.decided_by.startswith("rule:"), gate
    return took


def measure(ways: dict[str, tuple[Client, str]], samples: int, warmup: int, pause: float) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {label: [] for label in ways}
    order = random.Random(20)
    for i in range(warmup + samples):
        labels = list(ways)
        order.shuffle(labels)
        for label in labels:
            if pause:
                time.sleep(pause)
            took = open_passed(*ways[label])
            if i >= warmup:
                times[label].append(took)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", type=Path, action="append", required=True, help="a server binary (repeat)")
    parser.add_argument("--pause-ms", type=float, action="append", help="idle before each open (repeat; default 0)")
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    ways: dict[str, tuple[Client, str]] = {}
    servers, dirs = [], []
    try:
        for binary in args.binary:
            workdir = REPO / "target" / "bench-data" / f"idle-{uuid.uuid4().hex[:8]}"
            workdir.mkdir(parents=True)
            dirs.append(workdir)
            proc, url, agent, reviewer = start_server(binary, workdir)
            servers.append(proc)
            allow_the_action(url, reviewer, AGENT)
            gh = Client(url, token=agent)
            ways[str(binary)] = (gh, gh.start_run({}, title="bench: open after idle"))
        for pause_ms in args.pause_ms or [0.0]:
            times = measure(ways, args.samples, args.warmup, pause_ms / 1000)
            for label, ms in times.items():
                ms.sort()
                print(f"pause {pause_ms:4.0f} ms  {label:40} median {statistics.median(ms):6.3f} ms  "
                      f"p95 {ms[max(0, int(len(ms) * 0.95) - 1)]:6.3f} ms")
    finally:
        for gh, _ in ways.values():
            gh.close()
        for proc in servers:
            proc.terminate()
            proc.wait(10)
        for workdir in dirs:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
