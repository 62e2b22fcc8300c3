"""How the official SDK client (ClientSession) reacts to what a proxy may answer to tools/call.

    target/mcp-venv/bin/python tests/mcp/experiments.py [OUT_JSON]

Runs client.py against tap_proxy.py --rewrite REWRITE -- server.py (and against server.py
--mode MODE directly), in both eras (--negotiate legacy = 2025-11-25 initialize handshake,
--negotiate auto = server/discover at 2026-07-28), and records exit status and the first
line of the outcome. Also saves SDK-client session transcripts (both eras) through the tap
into captures/sessions/. The table is written to OUT_JSON (default:
tests/mcp/captures/sdk_client_reactions.json). Exit codes of client.py: 0 result returned,
3 MCPError raised, 4 other exception raised.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable
SERVER = f"{PY} {HERE / 'server.py'}"
TAP = f"{PY} {HERE / 'tap_proxy.py'}"
CLIENT = [PY, str(HERE / "client.py"), "--timeout", "3"]
CALL = ["call", "change_review", '{"change_id":"CR-1"}']

REWRITES = ["none", "is_error_fixed", "is_error_fixed_rt", "jsonrpc_error", "schema_fail", "no_structured",
            "null_structured", "no_is_error", "wrong_id"]
MODES = ["ok", "extra_member", "disagreeing_text", "non_json_text", "duplicate_key_text", "extra_text_block",
         "bad_format", "wrong_enum", "wrong_type", "missing_structured", "is_error_injection", "jsonrpc_error",
         "wrong_id"]


def run(server_cmd: str, negotiate: str) -> dict:
    p = subprocess.run([*CLIENT, "--negotiate", negotiate, "--server-cmd", server_cmd, *CALL],
                       capture_output=True, text=True, timeout=60)
    out = p.stdout.strip()
    try:
        body = json.loads(out)
    except ValueError:
        body = {"unparsed": out}
    if p.returncode == 0:
        outcome = {"returned": {k: body[k] for k in ("isError", "resultType") if k in body}}
    else:
        outcome = {"raised": body.get("exception"), "message": str(body.get("message", "")).splitlines()[0][:200]}
        if "code" in body:
            outcome["code"] = body["code"]
    return {"exit": p.returncode, **outcome}


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "captures" / "sdk_client_reactions.json"
    table: dict = {"proxy_rewrites": {}, "server_modes": {}}
    for negotiate in ("legacy", "auto"):
        for rw in REWRITES:
            cmd = SERVER if rw == "none" else f"{TAP} --rewrite {rw} -- {SERVER}"
            table["proxy_rewrites"].setdefault(rw, {})[negotiate] = run(cmd, negotiate)
        for mode in MODES:
            table["server_modes"].setdefault(mode, {})[negotiate] = run(f"{SERVER} --mode {mode}", negotiate)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(table, indent=2) + "\n")

    sessions = HERE / "captures" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    for negotiate, name in (("legacy", "sdk-client-2025-11-25"), ("auto", "sdk-client-2026-07-28")):
        log = sessions / f"{name}.jsonl"
        log.unlink(missing_ok=True)
        subprocess.run([*CLIENT, "--negotiate", negotiate, "--server-cmd", f"{TAP} --log {log} -- {SERVER}", *CALL],
                       capture_output=True, check=True, timeout=60)
    print(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
