"""The guard around the official MCP Python SDK's ``ClientSession.call_tool``.

``GuardedSession(session, guards)`` calls a tool through the session and passes the result
through the guard of the tool's MCP contract (``[input] kind = "mcp"``, as ``airlock mcp
import`` writes them): the caller gets a fresh ``CallToolResult`` built from the guard's
agent value, never the server's text.

The SDK has parsed the JSON-RPC message before ``call_tool`` returns, so the guard judges
the result as the SDK read it (re-serialised as the wire shows it: by alias, members the
server sent), not the raw bytes: a duplicate member or a lone surrogate in the message
itself is gone before the guard sees it (JSON *inside* a text block is still judged
strictly). For the raw bytes, run ``airlock mcp proxy`` between the host and the server.

Needs the ``mcp`` package (not a dependency of airlock_guard).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from typing import Any, Optional

from ._native import Admission, Guard

__all__ = ["GuardedSession"]


def _transport_kind(error: Any) -> Optional[str]:
    """The transport error an ``MCPError`` the SDK raised on this side of the wire stands
    for: its timeout (``REQUEST_TIMEOUT``, "Request 'tools/call' timed out") and its closed
    connection (``CONNECTION_CLOSED``, "Connection closed"). A server may send those codes
    too, with its own message: that is its JSON-RPC error, judged as one."""
    code, message = error.error.code, error.error.message
    if code == -32001 and message.endswith("timed out"):
        return "timeout"
    if code == -32000 and message == "Connection closed":
        return "connection_reset"
    return None


def _wire(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_unset=True)


class GuardedSession:
    """A ``ClientSession`` whose ``call_tool`` is judged by the guard of the tool's contract.

    ``guards`` maps tool names to guards of MCP tool contracts (``Guard.load_all``); a call
    to a tool without one raises ``KeyError`` before anything is sent.
    """

    def __init__(self, session: Any, guards: Mapping[str, Guard]):
        for tool, guard in guards.items():
            if not guard.is_mcp:
                raise ValueError(f"the contract of {tool!r} is not an MCP tool contract")
            if guard.tool != tool:
                # Every call to `tool` would be sent, then refused as another tool's.
                raise ValueError(f"the guard given for {tool!r} is the guard of {guard.tool!r}")
        self.session = session
        self.guards = dict(guards)
        self._next_id = 0
        #: The admission of the last call (for the operator: diagnostic, audit).
        self.last_admission: Optional[Admission] = None
        #: The exception the SDK raised in the last call, if any (for the operator).
        self.last_sdk_error: Optional[BaseException] = None

    async def call_tool(self, name: str, arguments: Optional[dict[str, Any]] = None, **kwargs: Any) -> Any:
        """``session.call_tool(name, arguments, **kwargs)``, judged: the ``CallToolResult`` the
        agent may be given (the projection, or the fixed failure as an ``isError`` result)."""
        from mcp import MCPError
        from mcp.types import CallToolResult

        guard = self.guards[name]
        self._next_id += 1
        call_id = self._next_id
        request = {
            "tool": name,
            "jsonrpc_id": call_id,
            "params": arguments or {},
            "now": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        }
        self.last_sdk_error = None
        try:
            result = await self.session.call_tool(name, arguments, **kwargs)
            message = {"jsonrpc": "2.0", "id": call_id, "result": _wire(result)}
            admission = guard.admit(request, json.dumps(message).encode())
        except MCPError as error:
            self.last_sdk_error = error
            kind = _transport_kind(error)
            if kind is not None:
                # No answer came (the SDK's timeout, a closed connection).
                admission = guard.admit_transport_error(request, kind)
            else:
                message = {"jsonrpc": "2.0", "id": call_id, "error": _wire(error.error)}
                admission = guard.admit(request, json.dumps(message).encode())
        except TimeoutError as error:
            self.last_sdk_error = error
            admission = guard.admit_transport_error(request, "timeout")
        except Exception as error:  # noqa: BLE001 - the SDK refused the message: nothing verified
            # Judged as an empty answer: the fixed failure, not retryable; the audit record
            # says "empty body", and last_sdk_error holds what the SDK refused.
            self.last_sdk_error = error
            admission = guard.admit(request, b"")
        self.last_admission = admission
        return CallToolResult.model_validate(admission.call_tool_result)
