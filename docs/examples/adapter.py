#!/usr/bin/env python3
"""A minimal Airlock adapter in Python, speaking the exec protocol (docs/exec-protocol.md).

The adapter does not judge responses itself: it hands every raw response to the guard,
run as a sidecar (`airlock guard`), and gives the agent exactly the value the guard
returns. That is the recommended way to use Airlock from a language other than Rust.

Run it under the harness, from the repository root:

    airlock check --contract schemas/review_status --adapter-cmd "python3 docs/examples/adapter.py"

Arguments are passed to `airlock guard` unchanged (for example `--contract DIR`); with
none, the sidecar serves every contract under ./schemas. The `airlock` binary is taken
from $AIRLOCK, else ./target/release/airlock, ./target/debug/airlock, else the PATH.

Only the standard library is used.
"""

import base64
import json
import os
import shutil
import subprocess
import sys


def airlock_binary():
    """The `airlock` executable to run as the sidecar."""
    candidates = [os.environ.get("AIRLOCK"), "target/release/airlock", "target/debug/airlock"]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("airlock")
    if found is None:
        sys.exit("adapter.py: no airlock binary (set AIRLOCK, build it, or put it on PATH)")
    return found


class GuardSidecar:
    """A client of `airlock guard`: one case line out, one answer line back, in order."""

    def __init__(self, guard_args):
        self.process = subprocess.Popen(
            [airlock_binary(), "guard", *guard_args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.next_id = 0

    def _ask(self, case):
        case_id = "py-%d" % self.next_id
        self.next_id += 1
        case["case"] = case_id
        self.process.stdin.write(json.dumps(case, separators=(",", ":")).encode() + b"\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the guard sidecar exited")
        answer = json.loads(line)
        if answer.get("case") != case_id or "agent" not in answer:
            # The sidecar's `error` answer: the case line itself was malformed.
            raise RuntimeError("the guard sidecar refused the case: %r" % answer)
        return answer["agent"]

    def admit(self, request, body):
        """The agent value for the raw response `body` (bytes) to `request`."""
        encoded = base64.b64encode(body).decode("ascii")
        return self._ask({"request": request, "response_b64": encoded})

    def transport_error(self, request, kind):
        """The agent value when the upstream call failed: timeout, connection_reset, unreachable."""
        return self._ask({"request": request, "transport_error": kind})

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def fixed_failure(request):
    """The value every rejection produces; used if the sidecar cannot answer at all."""
    return {
        "tool": request.get("tool"),
        "request_id": request.get("request_id"),
        "outcome": "failure",
        "error": {"code": "INVALID_RESPONSE", "retryable": False},
    }


def main():
    guard = GuardSidecar(sys.argv[1:])
    # In production the adapter calls its upstream here; under `airlock check` the harness
    # plays the upstream and hands over what it "answered".
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        request = case["request"]
        try:
            if "transport_error" in case:
                agent = guard.transport_error(request, case["transport_error"])
            else:
                agent = guard.admit(request, base64.b64decode(case["response_b64"]))
        except (RuntimeError, ValueError) as error:
            print("adapter.py: %s" % error, file=sys.stderr)
            agent = fixed_failure(request)
        # One answer line per case, in order, flushed: the harness waits for it.
        sys.stdout.write(json.dumps({"case": case["case"], "agent": agent}) + "\n")
        sys.stdout.flush()
    guard.close()


if __name__ == "__main__":
    main()
