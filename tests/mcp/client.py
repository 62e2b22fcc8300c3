"""An MCP client (stdio) built with the official Python SDK, for Airlock's MCP tests.

    client.py --server-cmd "CMD ARGS" list
    client.py --server-cmd "CMD ARGS" call TOOL '{"change_id":"CR-1"}'

`list` prints the ListToolsResult (all pages) as JSON; `call` prints the CallToolResult as
JSON, as the wire shows it (by_alias, exclude_unset). It uses ClientSession.initialize(), the
2025-11-25 handshake, unless --negotiate auto (server/discover at 2026-07-28 first, as
mcp.Client does by default). Exit status: 0 on a result (isError or not), 3 when the SDK raises
MCPError (a JSON-RPC error response), 4 when it raises anything else (e.g. RuntimeError from
the SDK's output-schema check); the exception is printed to stdout as
{"exception": TYPE, "message": ..., "code": ...} so a test can read it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any

import anyio

from mcp.client._probe import negotiate_auto
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.types import PaginatedRequestParams


def dump(model: Any) -> Any:
    # exclude_unset: print the members the peer sent, not the model's defaults (the SDK's
    # CallToolResult model defaults resultType to "complete", which a 2025-11-25 server never sends).
    return model.model_dump(by_alias=True, mode="json", exclude_unset=True)


async def run(args: argparse.Namespace) -> int:
    argv = shlex.split(args.server_cmd)
    env = dict(kv.split("=", 1) for kv in args.env)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env or None)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=args.timeout) as session:
            if args.negotiate == "legacy":
                await session.initialize()
            else:
                # What mcp.Client(mode="auto") does (its default): server/discover at 2026-07-28,
                # falling back to initialize on a JSON-RPC error.
                await negotiate_auto(session)
            if args.show_init:
                init = session.initialize_result or session.discover_result
                print(json.dumps({"protocolVersion": session.protocol_version, "result": dump(init)}), file=sys.stderr)
            try:
                if args.command == "list":
                    tools: list[Any] = []
                    cursor = None
                    while True:
                        page = await session.list_tools(
                            params=PaginatedRequestParams(cursor=cursor) if cursor else None
                        )
                        tools.extend(dump(t) for t in page.tools)
                        cursor = page.next_cursor
                        if not cursor:
                            break
                    print(json.dumps({"tools": tools}, indent=2))
                else:
                    arguments = json.loads(args.arguments)
                    result = await session.call_tool(args.tool, arguments)
                    print(json.dumps(dump(result), indent=2))
            except MCPError as e:
                print(json.dumps({"exception": "MCPError", "code": e.code, "message": e.message, "data": e.data}))
                return 3
            except Exception as e:  # noqa: BLE001 - the point is to report what the SDK raises
                print(json.dumps({"exception": type(e).__name__, "message": str(e)}))
                return 4
    return 0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server-cmd", required=True, help="server command line, split with shlex")
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="K=V",
        help="environment for the server; the SDK passes only HOME, LOGNAME, PATH, SHELL, TERM, USER otherwise",
    )
    p.add_argument("--timeout", type=float, default=20.0, help="per-request read timeout, seconds")
    p.add_argument(
        "--negotiate",
        choices=["legacy", "auto"],
        default="legacy",
        help="legacy: ClientSession.initialize() (2025-11-25 handshake); auto: server/discover first (2026-07-28)",
    )
    p.add_argument("--show-init", action="store_true", help="print the InitializeResult to stderr")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list")
    c = sub.add_parser("call")
    c.add_argument("tool")
    c.add_argument("arguments", nargs="?", default="{}")
    args = p.parse_args()
    sys.exit(anyio.run(run, args))


if __name__ == "__main__":
    main()
