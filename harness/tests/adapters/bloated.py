"""An adapter whose answers are huge: `value` answers every case with a success whose
data holds 60 members with names of 300 characters (about 20 KB a line, over the
16 KiB a report shows of one value); `case` answers with a case id of 100,000 DEL
characters (600 KB as JSON). Neither may make a report grow with the answer."""
import json
import sys

mode = sys.argv[1]
for line in sys.stdin:
    case = json.loads(line)
    request = case["request"]
    agent = {"tool": request["tool"], "request_id": request["request_id"], "outcome": "success"}
    case_id = case["case"]
    if mode == "value":
        agent["data"] = {f"k{i:02d}" + "x" * 300: "v" for i in range(60)}
    else:
        agent["data"] = {}
        case_id = "\x7f" * 100_000
    print(json.dumps({"case": case_id, "agent": agent}), flush=True)
