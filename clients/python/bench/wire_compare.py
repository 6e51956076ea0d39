"""The blocking client's lean HTTP path against another version of it.

Loads `gatehouse/_wire.py` from `--other-src` (a `clients/python/src` of
another commit, say from `git archive`) beside this tree's, and times the two
`Wire`s in one process against one release server, taking turns in an order
shuffled each round (seeded): a read of a gate, then an open of a gate.
What either adds to the server's own time is the difference between them.

    cargo build --release -p gatehouse-cli && scripts/python-env.sh
    mkdir -p /tmp/other && git archive HEAD~1 clients/python/src | tar -x -C /tmp/other
    target/pyenv/bin/python clients/python/bench/wire_compare.py --binary target/release/gatehouse \\
        --other-src /tmp/other/clients/python/src
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import shutil
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from checkpoint_overhead import REPO, start_server

from gatehouse import Client
from gatehouse import _wire as this_wire


def load_other(src: Path) -> Any:
    spec = importlib.util.spec_from_file_location("other_wire", src / "gatehouse" / "_wire.py")
    assert spec is not None and spec.loader is not None, f"no gatehouse/_wire.py under {src}"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", type=Path, default=REPO / "target" / "release" / "gatehouse")
    parser.add_argument("--other-src", type=Path, required=True, help="another commit's clients/python/src")
    parser.add_argument("--reads", type=int, default=1500)
    parser.add_argument("--opens", type=int, default=600)
    args = parser.parse_args()

    workdir = REPO / "target" / "bench-data" / f"wire-{uuid.uuid4().hex[:8]}"
    workdir.mkdir(parents=True)
    proc, url, agent, _ = start_server(args.binary, workdir)
    try:
        with Client(url, token=agent) as gh:
            run = gh.start_run({}, title="bench: wire")
            gate = gh.open_gate(run, "approval", "Go ahead?", payload={"step": 1}).id
        headers = {"Authorization": f"Bearer {agent}"}
        wires = {
            "this tree": this_wire.Wire(url + "/api/hitl", headers, 10.0),
            "other": load_other(args.other_src).Wire(url + "/api/hitl", headers, 10.0),
        }
        body = {"kind": "approval", "text": "Go ahead?", "payload": {"step": 1}}
        calls = {
            "read a gate": (args.reads, lambda w: w.request("GET", f"/gates/{gate}")),
            "open a gate": (args.opens, lambda w: w.request(
                "POST", f"/runs/{run}/gates", body=body, headers={"Idempotency-Key": uuid.uuid4().hex})),
        }
        order = random.Random(20)
        for what, (n, call) in calls.items():
            times: dict[str, list[float]] = {label: [] for label in wires}
            for i in range(n):
                labels = list(wires)
                order.shuffle(labels)
                for label in labels:
                    t0 = time.perf_counter()
                    response = call(wires[label])
                    took = (time.perf_counter() - t0) * 1000
                    assert response.status_code in (200, 201), response.text
                    if i >= n // 10:
                        times[label].append(took)
            for label, ts in times.items():
                ts.sort()
                print(f"{what:12} {label:10} median {statistics.median(ts):6.3f} ms  "
                      f"p10 {ts[len(ts) // 10]:6.3f} ms  p90 {ts[len(ts) * 9 // 10]:6.3f} ms  (n={len(ts)})")
        for w in wires.values():
            w.close()
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
