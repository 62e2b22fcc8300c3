"""A naive MCP adapter: it forwards the server's result to the agent as it came (the text
block verbatim, structuredContent unvalidated, the tool's own error text), trusting the
server. Injected text, disagreeing text and unknown members all reach the agent: the
mcp-* classes catch it (leak, shape, verdict)."""
import base64
import json
import sys

for line in sys.stdin:
    case = json.loads(line)
    request = case["request"]
    head = {"tool": request["tool"], "request_id": request["request_id"]}
    failure = dict(head, outcome="failure", error={"code": "UPSTREAM_UNAVAILABLE", "retryable": True})
    if "transport_error" in case:
        agent = failure
    else:
        try:
            message = json.loads(base64.b64decode(case["response_b64"]))
            result = message["result"]
            agent = {"content": result.get("content", []), "isError": bool(result.get("isError"))}
            if "structuredContent" in result:
                agent["structuredContent"] = result["structuredContent"]
        except Exception:
            agent = dict(head, outcome="failure", error={"code": "INVALID_RESPONSE", "retryable": False})
    print(json.dumps({"case": case["case"], "agent": agent}), flush=True)
