"""Right for any parser that keeps the last duplicate member, wrong for one that keeps the
first: every rejected response's text goes into a first `code` member of the error."""
import base64
import json
import sys

for line in sys.stdin:
    case = json.loads(line)
    request = case["request"]
    head = '"tool":%s,"request_id":%s' % (json.dumps(request["tool"]), json.dumps(request["request_id"]))
    if "transport_error" in case:
        agent = '{%s,"outcome":"failure","error":{"code":"UPSTREAM_UNAVAILABLE","retryable":true}}' % head
    else:
        body = base64.b64decode(case["response_b64"]).decode("utf-8", "replace")
        agent = '{%s,"outcome":"failure","error":{"code":%s,"code":"INVALID_RESPONSE","retryable":false}}' % (
            head, json.dumps(body))
    print('{"case":%s,"agent":%s}' % (json.dumps(case["case"]), agent), flush=True)
