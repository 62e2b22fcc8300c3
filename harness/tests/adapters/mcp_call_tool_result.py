"""A correct MCP adapter: every raw JSON-RPC message goes to the guard sidecar (its
command line is this script's arguments), and the agent gets the guard's value as the
fresh CallToolResult: success {"content": [text of the data], "structuredContent": data,
"isError": false}, failure {"content": [text of the failure envelope], "isError": true}."""
import json
import subprocess
import sys

guard = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
for line in sys.stdin:
    case = json.loads(line)
    guard.stdin.write(line.encode() if line.endswith("\n") else (line + "\n").encode())
    guard.stdin.flush()
    answer = json.loads(guard.stdout.readline())
    agent = answer["agent"]
    if agent["outcome"] == "success":
        data = agent["data"]
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        result = {"content": [{"type": "text", "text": text}], "structuredContent": data, "isError": False}
    else:
        text = json.dumps(agent, separators=(",", ":"))
        result = {"content": [{"type": "text", "text": text}], "isError": True}
    print(json.dumps({"case": answer["case"], "agent": result}), flush=True)
