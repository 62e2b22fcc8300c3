#!/usr/bin/env python3
"""A naive adapter, written the way adapters often are: it must FAIL `airlock check`.

It speaks the exec protocol (docs/exec-protocol.md) like docs/examples/adapter.py, but
judges responses itself, as many hand-written connectors do: it parses the body with
Python's `json` module (last duplicate wins, NaN accepted, no size limit), checks that
`outcome` is "success", and forwards `data` as it came, every member included. It never
looks at the contract. `airlock check` must catch it (exit 1: leaks, verdicts, values):

    airlock check --contract schemas/review_status --adapter-cmd "python3 docs/examples/naive_adapter.py"

`.ci/run` runs exactly that and fails when the exit code is not 1, so the main job's
claim, that `check` catches an adapter that lets rejected input through, is tested on
every run. Only the standard library is used.
"""

import base64
import json
import sys


def agent_value(case):
    request = case["request"]
    failure = {
        "tool": request.get("tool", ""),
        "request_id": request["request_id"],
        "outcome": "failure",
        "error": {"code": "UPSTREAM_UNAVAILABLE", "retryable": True},
    }
    if "transport_error" in case:
        return failure
    try:
        body = json.loads(base64.b64decode(case["response_b64"]))
    except ValueError:
        return dict(failure, error={"code": "INVALID_RESPONSE", "retryable": False})
    if isinstance(body, dict) and body.get("outcome") == "success" and isinstance(body.get("data"), dict):
        return {"tool": failure["tool"], "request_id": failure["request_id"], "outcome": "success", "data": body["data"]}
    return dict(failure, error={"code": "INVALID_RESPONSE", "retryable": False})


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        answer = {"case": case["case"], "agent": agent_value(case)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
