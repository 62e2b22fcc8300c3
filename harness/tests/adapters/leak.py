"""A naive adapter: trusts serde-like parsing, passes data through, and puts the
parser's message in the error. Every one of those is a finding."""
import base64
import json
import sys

for line in sys.stdin:
    case = json.loads(line)
    request = case["request"]
    head = {"tool": request["tool"], "request_id": request["request_id"]}
    if "transport_error" in case:
        agent = dict(head, outcome="failure", error={"code": "UPSTREAM_UNAVAILABLE", "retryable": True})
    else:
        body = base64.b64decode(case["response_b64"])
        try:
            value = json.loads(body)
            if value.get("outcome") == "success":
                agent = dict(head, outcome="success", data=value.get("data"))
            else:
                agent = dict(head, outcome="failure", error=value.get("error"))
        except Exception as error:  # the validator text goes to the agent: a leak
            agent = dict(head, outcome="failure",
                         error={"code": "INVALID_RESPONSE", "retryable": False, "message": str(error)})
    print(json.dumps({"case": case["case"], "agent": agent}), flush=True)
