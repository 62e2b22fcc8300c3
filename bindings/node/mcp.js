'use strict';
// The MCP TypeScript SDK's Client.callTool through the guard. The SDK reads the server's
// JSON-RPC line with JSON.parse before any code of ours sees it, so the wrapper judges the
// message rebuilt from what the SDK returns. What that loses, and the proxy keeps: the
// raw bytes (a duplicate member is already resolved last-wins, a lone surrogate already
// replaced, a number such as 1e400 already Infinity — which JSON.stringify writes as
// null), the JSON-RPC id binding (the SDK matched the id itself) and the byte limit on
// the wire. For all of those, run the server behind `airlock mcp proxy` (docs/mcp.md).

const { Guard, Guards, RoutingError } = require('./index.js');

function guardFor(guards, tool) {
  const guard = guards instanceof Guard ? guards : guards instanceof Guards ? guards.get(tool) : undefined;
  if (!guard || guard.tool !== tool) {
    throw new RoutingError(`no contract for tool ${JSON.stringify(tool)}`);
  }
  return guard;
}

/**
 * `client.callTool(params, resultSchema, options)` with the result judged by the guard of
 * the tool's MCP contract before the application sees it. Resolves to
 * `{result, admission}`: `result` is the CallToolResult the application may use (a fresh
 * one built from the projected `structuredContent`, or the fixed failure with
 * `isError: true`), `admission` the guard's decision (diagnostic and audit for the
 * operator). A JSON-RPC error or a thrown SDK error becomes the contract's failure; it
 * never reaches the result's text.
 */
async function callToolGuarded(client, guards, params, resultSchema, options) {
  const guard = guardFor(guards, params.name);
  const id = 1; // the SDK matched the real id; the rebuilt message is bound to this one
  const request = { tool: params.name, jsonrpc_id: id, params: params.arguments || {}, now: new Date() };
  let message;
  try {
    const result = await client.callTool(params, resultSchema, options);
    message = { jsonrpc: '2.0', id, result };
  } catch (error) {
    if (error && typeof error.code === 'number' && error.code !== -32001) {
      // McpError: the server's JSON-RPC error, or the SDK refusing the result.
      message = { jsonrpc: '2.0', id, error: { code: error.code, message: 'error' } };
    } else {
      const kind = error && error.code === -32001 ? 'timeout' : 'unreachable';
      const admission = guard.admitTransportError(request, kind);
      return { result: admission.callToolResult, admission };
    }
  }
  const admission = await guard.admitAsync(request, Buffer.from(JSON.stringify(message), 'utf8'));
  return { result: admission.callToolResult, admission };
}

module.exports = { callToolGuarded };
