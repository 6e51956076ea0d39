"""Schema-driven fuzzing of a real `gatehouse serve`.

Starts the server on a fresh SQLite file in a temporary directory, makes a
token of each role (agent, reviewer, admin), and runs schemathesis against
the server's own OpenAPI document once per token: a bounded number of
generated requests per operation, valid and invalid. Fails when any answer
is a 5xx or does not match the document (its status code, content type or
body schema). Usage: fuzz.py GATEHOUSE_BINARY [EXAMPLES_PER_OPERATION]
"""

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
    ]
)


def token(binary: str, db: Path, role: str, name: str) -> str:
    out = subprocess.run(
        [binary, "--db", str(db), "token", "create", "--role", role, "--name", name],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    secret = out.strip()
    if not secret.startswith("ghs_"):
        sys.exit(f"cannot read the {role} token from: {out!r}")
    return secret


def main() -> int:
    binary = sys.argv[1]
    examples = sys.argv[2] if len(sys.argv) > 2 else "15"
    schemathesis = str(Path(sys.executable).parent / "schemathesis")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "gatehouse.db"
        tokens = {role: token(binary, db, role, f"fuzz-{role}") for role in ("agent", "reviewer", "admin")}
        log = open(Path(tmp) / "serve.log", "w+")
        server = subprocess.Popen(
            [binary, "--db", str(db), "serve", "--bind", "127.0.0.1:0"],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "GATEHOUSE_LOG": "warn,gatehouse=info"},
        )
        try:
            origin = None
            for _ in range(600):
                log.seek(0)
                found = re.search(r"listening on (http://[0-9.:]+)", log.read())
                if found:
                    origin = found.group(1)
                    break
                if server.poll() is not None:
                    break
                time.sleep(0.05)
            if origin is None:
                log.seek(0)
                sys.exit(f"gatehouse serve did not start:\n{log.read()}")
            failed = []
            for role, secret in tokens.items():
                print(f"==> schemathesis as the {role} token ({examples} examples per operation)", flush=True)
                code = subprocess.run(
                    [
                        schemathesis,
                        "run",
                        f"{origin}/api/hitl/openapi.json",
                        "--url",
                        origin,
                        "--header",
                        f"Authorization: Bearer {secret}",
                        "--checks",
                        CHECKS,
                        "--max-examples",
                        examples,
                        "--phases",
                        "examples,fuzzing",
                        "--seed",
                        "17",
                        "--generation-database",
                        "none",
                        "--request-timeout",
                        "10",
                        "--workers",
                        "2",
                        "--suppress-health-check",
                        "all",
                        "--no-color",
                        # Long polls hold a request open by design; an admin revoking
                        # tokens would end the run's own (tests/integration cover it).
                        "--exclude-path-regex",
                        r"/wait$|/events$|/directive$|/tokens/\{id_or_name\}$",
                    ],
                    # Its working files stay out of the checkout.
                    cwd=tmp,
                ).returncode
                if code != 0:
                    failed.append(role)
            if server.poll() is not None:
                failed.append("the server exited during the run")
            log.seek(0)
            panics = [line for line in log.read().splitlines() if "panicked" in line]
            if panics:
                failed.append("the server panicked: " + "; ".join(panics[:3]))
            if failed:
                print(f"fuzzing failed: {', '.join(failed)}", file=sys.stderr)
                return 1
            print("fuzzing passed: no 5xx and every answer matches the OpenAPI document")
            return 0
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
