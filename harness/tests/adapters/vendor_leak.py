"""A hand-written vendor adapter for ci_pipeline_status (GitLab's pipeline document): it
maps the members the contract names, but leniently (any JSON reader, the last duplicate
wins, names matched case-insensitively and trimmed, numbers coerced from strings, the
status lower-cased and trimmed, any ISO 8601 time accepted), skips the vendor schema and
the freshness check, and forwards every unmapped member "for context" under
data.details. The vendor-* classes catch it (leak, verdict, value)."""
import base64
import json
import sys
from datetime import datetime, timezone

TABLE = {"success": "succeeded", "failed": "failed", "running": "running",
         "pending": "pending", "created": "pending", "waiting_for_resource": "pending",
         "preparing": "pending", "scheduled": "pending", "manual": "pending",
         "canceled": "cancelled", "canceling": "cancelled", "skipped": "skipped"}
MAPPED = {"project_id", "id", "status", "ref", "sha", "updated_at"}


def lookup(doc, name):
    for key, value in doc.items():
        if key.strip().lower() == name:
            return value
    raise KeyError(name)


def answer(request, body):
    head = {"tool": request["tool"], "request_id": request["request_id"]}
    doc = json.loads(body)
    if "message" in doc:
        code = "NOT_FOUND" if str(doc["message"]).startswith("404") else "UPSTREAM_UNAVAILABLE"
        return dict(head, outcome="failure",
                    error={"code": code, "retryable": code == "UPSTREAM_UNAVAILABLE"})
    time = datetime.fromisoformat(str(lookup(doc, "updated_at")).replace("Z", "+00:00"))
    data = {
        "project_id": int(lookup(doc, "project_id")),
        "pipeline_id": int(lookup(doc, "id")),
        "state": TABLE[str(lookup(doc, "status")).strip().lower()],
        "ref": str(lookup(doc, "ref")),
        "sha": str(lookup(doc, "sha")),
        "observed_at": time.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")
        .rstrip("0").rstrip(".") + "Z",
        "details": {k: v for k, v in doc.items() if k not in MAPPED},
    }
    params = request.get("params", {})
    if data["project_id"] != params.get("project_id") or data["pipeline_id"] != params.get("pipeline_id"):
        raise ValueError("binding")
    return dict(head, outcome="success", data=data)


for line in sys.stdin:
    case = json.loads(line)
    request = case["request"]
    head = {"tool": request["tool"], "request_id": request["request_id"]}
    if "transport_error" in case:
        agent = dict(head, outcome="failure", error={"code": "UPSTREAM_UNAVAILABLE", "retryable": True})
    else:
        try:
            agent = answer(request, base64.b64decode(case["response_b64"]))
        except Exception:
            agent = dict(head, outcome="failure", error={"code": "INVALID_RESPONSE", "retryable": False})
    print(json.dumps({"case": case["case"], "agent": agent}), flush=True)
