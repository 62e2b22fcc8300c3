'use strict';
// The MCP TypeScript SDK's Client through the guard. The SDK reads the server's JSON-RPC
// line with JSON.parse before any code of ours sees it, so the wrapper judges the message
// rebuilt from the result the SDK read. What that loses, and the proxy keeps: the raw
// bytes (a duplicate member is already resolved last-wins, a lone surrogate already
// replaced, a number such as 1e400 already Infinity — which JSON.stringify writes as
// null), the JSON-RPC id binding (the SDK matched the id itself) and the byte limit on
// the wire. For all of those, run the server behind `airlock mcp proxy` (docs/mcp.md).

const { Guard, Guards, RoutingError } = require('./index.js');

// The SDK's error codes for what happened on this side of the wire (ErrorCode in
// @modelcontextprotocol/sdk/types.js).
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;

// The result schema `Client.callTool` reads a result with, when the SDK can be found.
function callToolResultSchema() {
  try {
    return require('@modelcontextprotocol/sdk/types.js').CallToolResultSchema;
  } catch {
    return undefined;
  }
}

function guardFor(guards, tool) {
  const guard = guards instanceof Guard ? guards : guards instanceof Guards ? guards.get(tool) : undefined;
  if (!guard || guard.tool !== tool) {
    throw new RoutingError(`no contract for tool ${JSON.stringify(tool)}`);
  }
  if (!guard.isMcp) {
    throw new RoutingError(`the contract of ${JSON.stringify(tool)} is not an MCP tool contract ([input] kind = "mcp")`);
  }
  return guard;
}

/**
 * Send `tools/call`. Through `client.request` with the SDK's own result schema, as
 * `Client.callTool` does, but without `callTool`'s check of `structuredContent` against
 * the output schema: that check throws a JSON-RPC-looking error (-32600, -32602) that
 * cannot be told from the server's own, and the guard makes it anyway, strictly, and says
 * which failure it was. A client without `request` (a wrapper of the SDK's Client) is
 * called through `callTool`.
 */
function send(client, params, resultSchema, options) {
  const schema = resultSchema || callToolResultSchema();
  if (typeof client.request === 'function' && schema) {
    return { direct: true, result: client.request({ method: 'tools/call', params }, schema, options) };
  }
  return { direct: false, result: client.callTool(params, resultSchema, options) };
}

// `callTool`'s own refusals of a result (it names structured content), as opposed to an
// error the server sent.
function refusedByCallTool(error) {
  return (error.code === -32600 || error.code === -32602) && /structured content/i.test(String(error.message));
}

let nextId = 0;

/**
 * `client.callTool(params, resultSchema, options)` with the result judged by the guard of
 * the tool's MCP contract before the application sees it. Resolves to
 * `{result, admission}`: `result` is the CallToolResult the application may use (a fresh
 * one built from the projected `structuredContent`, or the fixed failure with
 * `isError: true`), `admission` the guard's decision (diagnostic and audit for the
 * operator). The server's JSON-RPC error is judged as one; a timeout or a closed
 * connection is the transport failure; a result the SDK could not read is judged as an
 * answer with nothing verified (the fixed failure, not retryable). Nothing of any of them
 * reaches the result's text.
 */
async function callToolGuarded(client, guards, params, resultSchema, options) {
  const guard = guardFor(guards, params.name);
  // The SDK matched the real id; the rebuilt message is bound to one of ours, a fresh one
  // per call, so that each audit record names its call.
  nextId += 1;
  const id = nextId;
  const request = { tool: params.name, jsonrpc_id: id, params: params.arguments || {}, now: new Date() };
  let direct = false;
  let raw;
  try {
    const sent = send(client, params, resultSchema, options);
    direct = sent.direct;
    raw = JSON.stringify({ jsonrpc: '2.0', id, result: await sent.result });
  } catch (error) {
    const code = error && typeof error.code === 'number' ? error.code : null;
    if (code === REQUEST_TIMEOUT || code === CONNECTION_CLOSED) {
      const admission = guard.admitTransportError(request, code === REQUEST_TIMEOUT ? 'timeout' : 'connection_reset');
      return { result: admission.callToolResult, admission };
    }
    if (code !== null && (direct || !refusedByCallTool(error))) {
      // The server's JSON-RPC error: judged as such; its message is not kept.
      raw = JSON.stringify({ jsonrpc: '2.0', id, error: { code, message: 'error' } });
    } else if (code !== null || (error && (error.name === 'ZodError' || Array.isArray(error.issues)))) {
      // The SDK refused the result: nothing of it was verified.
      raw = '';
    } else {
      // Sending failed (not connected, a broken pipe).
      const admission = guard.admitTransportError(request, 'unreachable');
      return { result: admission.callToolResult, admission };
    }
  }
  const admission = await guard.admitAsync(request, Buffer.from(raw, 'utf8'));
  return { result: admission.callToolResult, admission };
}

module.exports = { callToolGuarded };
