"""Capture raw JSON-RPC lines from server.py over stdio into tests/mcp/captures/.

    target/mcp-venv/bin/python tests/mcp/capture.py [OUT_DIR]

Speaks the protocol by hand (no SDK on this side), so every saved response is the exact line
the server wrote (bytes as written, one line, "\n"-terminated). The requests it sends are
fixed (ids 1, 2, 3, ...) and saved too. Layout:

  handshake/2025-11-25/*.json   initialize request/response, notifications/initialized
  handshake/2026-07-28/*.json   server/discover request/response (no initialize in that era)
  tools_list.json               response to tools/list (2025-11-25, one page)
  tools_list.2026-07-28.json    response to tools/list (2026-07-28 era, _meta-stamped request)
  tools_list.paged/             tools/list with --page-size 2: page-1 (nextCursor), page-2
  calls/requests/<tool>.json    the tools/call request line sent for each tool
  calls/<mode>/<tool>.json      the tools/call response line, per misbehaviour mode and tool
  calls-2026-07-28/ok/<tool>.json  well-behaved responses in the 2026-07-28 era
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, str(HERE / "server.py")]

CALLS = {
    "change_review": {"change_id": "CR-1"},
    "project_quota": {"project_id": "P-7"},
    "echo": {"message": "hello from airlock"},
}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "airlock-capture", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
META_2026 = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "airlock-capture", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def line(msg: dict) -> bytes:
    return (json.dumps(msg, separators=(",", ":")) + "\n").encode()


class Session:
    def __init__(self, *args: str) -> None:
        env = dict(os.environ)
        env.pop("AIRLOCK_TEST_MODE", None)
        env.pop("AIRLOCK_TEST_PAGE_SIZE", None)
        env["AIRLOCK_TEST_FIXED_TIME"] = "1"  # captures are reproducible
        self.p = subprocess.Popen([*SERVER, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def send(self, msg: dict) -> bytes:
        raw = line(msg)
        self.p.stdin.write(raw)
        self.p.stdin.flush()
        return raw

    def response(self) -> bytes:
        # The next line that is a response (has "result" or "error"); notifications are skipped.
        while True:
            raw = self.p.stdout.readline()
            if not raw:
                raise RuntimeError("server closed stdout")
            msg = json.loads(raw)
            if "result" in msg or "error" in msg:
                return raw

    def request(self, msg: dict) -> tuple[bytes, bytes]:
        return self.send(msg), self.response()

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait(timeout=10)


def save(path: Path, raw: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)


def legacy(*args: str) -> tuple[Session, bytes, bytes]:
    s = Session(*args)
    req, resp = s.request(INIT)
    s.send(INITIALIZED)
    return s, req, resp


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "captures"
    modes = json.loads(subprocess.run([*SERVER, "--list-modes"], capture_output=True, check=True).stdout)

    s, req, resp = legacy()
    save(out / "handshake/2025-11-25/initialize.request.json", req)
    save(out / "handshake/2025-11-25/initialize.response.json", resp)
    save(out / "handshake/2025-11-25/initialized.notification.json", line(INITIALIZED))
    req, resp = s.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    save(out / "tools_list.request.json", req)
    save(out / "tools_list.json", resp)
    s.close()

    s, _, _ = legacy("--page-size", "2")
    cursor, page = None, 1
    while True:
        msg = {"jsonrpc": "2.0", "id": 1 + page, "method": "tools/list"}
        if cursor:
            msg["params"] = {"cursor": cursor}
        req, resp = s.request(msg)
        save(out / f"tools_list.paged/page-{page}.request.json", req)
        save(out / f"tools_list.paged/page-{page}.response.json", resp)
        cursor = json.loads(resp)["result"].get("nextCursor")
        if not cursor:
            break
        page += 1
    s.close()

    for mode in modes:
        s, _, _ = legacy("--mode", mode)
        for i, (tool, arguments) in enumerate(CALLS.items()):
            call = {"jsonrpc": "2.0", "id": 3 + i, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
            req, resp = s.request(call)
            if mode == "ok":
                save(out / f"calls/requests/{tool}.json", req)
            save(out / f"calls/{mode}/{tool}.json", resp)
        s.close()

    s = Session()
    disc = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META_2026}}
    req, resp = s.request(disc)
    save(out / "handshake/2026-07-28/discover.request.json", req)
    save(out / "handshake/2026-07-28/discover.response.json", resp)
    req, resp = s.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": META_2026}})
    save(out / "tools_list.2026-07-28.request.json", req)
    save(out / "tools_list.2026-07-28.json", resp)
    for i, (tool, arguments) in enumerate(CALLS.items()):
        call = {
            "jsonrpc": "2.0",
            "id": 3 + i,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": META_2026},
        }
        req, resp = s.request(call)
        save(out / f"calls-2026-07-28/requests/{tool}.json", req)
        save(out / f"calls-2026-07-28/ok/{tool}.json", resp)
    s.close()
    print(f"captured into {out}")


if __name__ == "__main__":
    main()
