"""A hand-written command adapter for git_branch_head (`git for-each-ref` output): it
reads the lines the way shell scripts often do (any line ending, lines without `=` and
unknown keys skipped, the last duplicate wins, values trimmed, undecodable bytes
replaced, any ISO 8601 time accepted). Banners, warnings, duplicates and colour codes
all get through: the lines-* classes catch it (verdict, leak)."""
import base64
import json
import sys
from datetime import datetime, timezone

KEYS = {"ref", "objectname", "committerdate"}


def answer(request, body):
    head = {"tool": request["tool"], "request_id": request["request_id"]}
    values = {}
    for line in body.decode("utf-8", errors="replace").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() in KEYS:
            values[key.strip()] = value.strip()
    time = datetime.fromisoformat(values["committerdate"].replace("Z", "+00:00"))
    data = {
        "ref": values["ref"],
        "commit": values["objectname"],
        "committed_at": time.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if data["ref"] != request.get("params", {}).get("ref"):
        raise ValueError("binding")
    return dict(head, outcome="success", data=data)


for line in sys.stdin:
    case = json.loads(line)
    request = case["request"]
    head = {"tool": request["tool"], "request_id": request["request_id"]}
    if "transport_error" in case:
        agent = dict(head, outcome="failure", error={"code": "UPSTREAM_UNAVAILABLE", "retryable": False})
    else:
        try:
            agent = answer(request, base64.b64decode(case["response_b64"]))
        except Exception:
            agent = dict(head, outcome="failure", error={"code": "INVALID_RESPONSE", "retryable": False})
    print(json.dumps({"case": case["case"], "agent": agent}), flush=True)
