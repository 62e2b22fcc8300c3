"""A raw stdio JSON-RPC tap between an MCP client and server, for experiments and captures.

    tap_proxy.py [--log FILE] [--rewrite MODE] -- SERVER_CMD ARGS...

Forwards every line unchanged in both directions and, with --log, appends each message to
FILE as {"dir": "c2s"|"s2c", "msg": <the JSON-RPC message>} (one per line). With --rewrite,
the response to every tools/call is replaced (this is how the SDK client's reaction to a
proxy's answer was checked):

  is_error_fixed   {"content":[{"type":"text","text":FIXED}],"isError":true}
  is_error_fixed_rt  the same plus "resultType": "complete" (required at 2026-07-28)
  jsonrpc_error    a JSON-RPC error {"code":-32603,"message":FIXED}
  schema_fail      structuredContent gains a member `extra` (outputSchema has additionalProperties false)
  no_structured    structuredContent removed, isError false
  null_structured  "structuredContent": null
  no_is_error      isError member removed (otherwise unchanged)
  wrong_id         the response id replaced by id + 1000
"""

import json
import subprocess
import sys
import threading

FIXED = "airlock: the tool result was withheld because it broke the tool's contract"


def main() -> None:
    argv = sys.argv[1:]
    log_path = rewrite = None
    while argv and argv[0] != "--":
        opt = argv.pop(0)
        if opt == "--log":
            log_path = argv.pop(0)
        elif opt == "--rewrite":
            rewrite = argv.pop(0)
        else:
            sys.exit(f"tap_proxy.py: unknown option {opt}")
    if not argv or argv[0] != "--" or len(argv) < 2:
        sys.exit(__doc__)
    child = subprocess.Popen(argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    log = open(log_path, "a", encoding="utf-8") if log_path else None
    lock = threading.Lock()
    calls: set = set()

    def record(direction: str, line: bytes) -> None:
        if log is None:
            return
        try:
            msg = json.loads(line)
        except ValueError:
            msg = {"unparsed": line.decode("utf-8", "replace")}
        with lock:
            log.write(json.dumps({"dir": direction, "msg": msg}) + "\n")
            log.flush()

    def c2s() -> None:
        for line in sys.stdin.buffer:
            record("c2s", line)
            try:
                msg = json.loads(line)
                if isinstance(msg, dict) and msg.get("method") == "tools/call" and "id" in msg:
                    calls.add(json.dumps(msg["id"]))
            except ValueError:
                pass
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    def transform(line: bytes) -> bytes:
        if rewrite is None:
            return line
        msg = json.loads(line)
        if not (isinstance(msg, dict) and "id" in msg and json.dumps(msg["id"]) in calls):
            return line
        res = msg.get("result")
        if rewrite == "is_error_fixed":
            msg["result"] = {"content": [{"type": "text", "text": FIXED}], "isError": True}
        elif rewrite == "is_error_fixed_rt":
            msg["result"] = {"content": [{"type": "text", "text": FIXED}], "isError": True, "resultType": "complete"}
        elif rewrite == "jsonrpc_error":
            msg.pop("result", None)
            msg["error"] = {"code": -32603, "message": FIXED}
        elif rewrite == "schema_fail" and res is not None and isinstance(res.get("structuredContent"), dict):
            res["structuredContent"]["extra"] = "x"
        elif rewrite == "no_structured" and res is not None:
            res.pop("structuredContent", None)
        elif rewrite == "null_structured" and res is not None:
            res["structuredContent"] = None
        elif rewrite == "no_is_error" and res is not None:
            res.pop("isError", None)
        elif rewrite == "wrong_id":
            msg["id"] = msg["id"] + 1000 if isinstance(msg["id"], int) else f"x-{msg['id']}"
        return (json.dumps(msg) + "\n").encode()

    t = threading.Thread(target=c2s, daemon=True)
    t.start()
    for line in child.stdout:
        record("s2c", line)
        out = transform(line)
        if out is not line:
            record("s2c-rewritten", out)
        sys.stdout.buffer.write(out)
        sys.stdout.buffer.flush()
    sys.exit(child.wait())


if __name__ == "__main__":
    main()
