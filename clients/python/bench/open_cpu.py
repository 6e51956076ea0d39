"""The server's CPU time per gate an allow-rule passes as it opens, by thread.

Starts one server per binary (as `open_after_idle.py` does: its own run and
allow-rule), opens `--samples` gates held for their decision, and reads each
server thread's user and system time from `/proc` before and after: what the
writer thread (SQLite: the statements, the WAL frames, the fsync) and the
runtime's threads (HTTP, auth, JSON, redaction, the answer) spend on one
open, hot (`--pause-ms 0`) and after the server sat idle. Linux only; the
clock ticks are 10 ms, so use a few hundred samples at least.

    target/pyenv/bin/python clients/python/bench/open_cpu.py \\
        --binary /tmp/gatehouse-before --binary target/release/gatehouse --samples 1000
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
import uuid
from pathlib import Path

from checkpoint_overhead import AGENT, REPO, allow_the_action, start_server
from open_after_idle import open_passed

from gatehouse import Client


def thread_ticks(pid: int) -> dict[str, tuple[str, int]]:
    """Each thread's name and user plus system clock ticks so far."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except FileNotFoundError:  # a blocking-pool thread that just ended
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out[tid] = (name, int(fields[11]) + int(fields[12]))
    return out


def measure(binary: Path, samples: int, warmup: int, pause: float) -> str:
    workdir = REPO / "target" / "bench-data" / f"cpu-{uuid.uuid4().hex[:8]}"
    workdir.mkdir(parents=True)
    proc, url, agent, reviewer = start_server(binary, workdir)
    try:
        allow_the_action(url, reviewer, AGENT)
        with Client(url, token=agent) as gh:
            run = gh.start_run({}, title="bench: CPU per open")
            for _ in range(warmup):
                open_passed(gh, run)
            before, took = thread_ticks(proc.pid), []
            for _ in range(samples):
                if pause:
                    time.sleep(pause)
                took.append(open_passed(gh, run))
            after = thread_ticks(proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)
    per_name: dict[str, int] = {}
    for tid, (name, ticks) in after.items():
        per_name[name] = per_name.get(name, 0) + ticks - before.get(tid, (name, 0))[1]
    ms = 1000 / os.sysconf("SC_CLK_TCK") / samples
    split = ", ".join(f"{name} {t * ms:.3f}" for name, t in sorted(per_name.items(), key=lambda kv: -kv[1]) if t)
    return (f"pause {pause * 1000:4.0f} ms  {str(binary):40} median {statistics.median(took):6.3f} ms  "
            f"CPU {sum(per_name.values()) * ms:.3f} ms per open ({split})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", type=Path, action="append", required=True, help="a server binary (repeat)")
    parser.add_argument("--pause-ms", type=float, action="append", help="idle before each open (repeat; default 0)")
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=30)
    args = parser.parse_args()
    for pause_ms in args.pause_ms or [0.0]:
        for binary in args.binary:
            print(measure(binary, args.samples, args.warmup, pause_ms / 1000), flush=True)


if __name__ == "__main__":
    main()
