'use strict';
// The MCP TypeScript SDK's Client through the guard. The SDK reads the server's JSON-RPC
// line with JSON.parse before any code of ours sees it, so the wrapper judges the message
// rebuilt from the result the SDK read. What that loses, and the proxy keeps: the raw
// bytes (a duplicate member is already resolved last-wins, a lone surrogate already
// replaced, a number such as 1e400 already Infinity — which JSON.stringify writes as
// null), the JSON-RPC id binding (the SDK matched the id itself) and the byte limit on
// the wire. For all of those, run the server behind `airlock mcp proxy` (docs/mcp.md).

const { Guard, Guards, RoutingError } = require('./index.js');

// The SDK's error codes (ErrorCode in @modelcontextprotocol/sdk/types.js) for what
// happened on this side of the wire, which a server may send as well: a timeout is told
// by the `timeout` the SDK puts in its data, a closed connection by its message.
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;

// The result as the SDK's JSON.parse read it: `client.request` hands the result to its
// schema's `safeParse` and resolves to what that returns. The SDK's own
// CallToolResultSchema rewrites it first (a missing `content` becomes `[]`, members a
// text block may not have are dropped), so a result Rust and Python refuse would be
// admitted here.
const AS_READ = Object.freeze({ safeParse: (data) => ({ success: true, data }) });

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

/** An `McpError` (or a subclass): the SDK's, or the server's error response. */
function isMcpError(error) {
  return Boolean(error) && typeof error.code === 'number' && typeof error.message === 'string' && error.message.startsWith('MCP error ');
}

/** What a thrown error stands for: a transport error kind, `'server'`, `'refused'`. */
function classify(error, direct) {
  if (isMcpError(error)) {
    const data = error.data || {};
    if (error.code === REQUEST_TIMEOUT && ('timeout' in data || 'maxTotalTimeout' in data)) return 'timeout';
    if (error.code === CONNECTION_CLOSED && /: (Connection closed|Request was cancelled)$/.test(error.message)) return 'connection_reset';
    // callTool's own refusals of a result name structured content; through `request`
    // there are none.
    const refused = (error.code === -32600 || error.code === -32602) && /structured content/i.test(error.message);
    return !direct && refused ? 'refused' : 'server';
  }
  // The SDK's result schema (zod) could not read the result.
  if (error && Array.isArray(error.issues)) return 'refused';
  // Sending failed (not connected, a broken pipe).
  return 'unreachable';
}

let nextId = 0;

/**
 * `client.callTool(params, resultSchema, options)` with the result judged by the guard of
 * the tool's MCP contract before the application sees it. Resolves to
 * `{result, admission}`: `result` is the CallToolResult the application may use (a fresh
 * one built from the projected `structuredContent`, or the fixed failure with
 * `isError: true`), `admission` the guard's decision (diagnostic and audit for the
 * operator). The server's JSON-RPC error is judged as one; the SDK's timeout or closed
 * connection is the transport failure; a result the SDK could not read is judged as an
 * answer with nothing verified (the fixed failure, not retryable). Nothing of any of them
 * reaches the result's text. A call the caller aborted (`options.signal`) rejects with
 * the abort, as `callTool` does.
 *
 * `tools/call` goes through `client.request`, as `callTool` sends it, with the result
 * read as the SDK's JSON.parse gave it (`resultSchema`, when given, is used instead),
 * without `callTool`'s check of `structuredContent` against the output schema: that
 * check throws an error with a JSON-RPC code (-32600, -32602) that cannot be told from
 * the server's own, and the guard makes it anyway, strictly, saying which failure it
 * was. (So an override of `callTool` on the client is not called, and neither is its
 * refusal of task-only tools.) A client without `request` is called through `callTool`.
 */
async function callToolGuarded(client, guards, params, resultSchema, options) {
  if (!client || (typeof client.request !== 'function' && typeof client.callTool !== 'function')) {
    throw new TypeError("callToolGuarded(client, …): client is the MCP SDK's Client (it has request and callTool)");
  }
  const guard = guardFor(guards, params.name);
  // The SDK matched the real id; the rebuilt message is bound to one of ours, a fresh one
  // per call, so that each audit record names its call.
  nextId += 1;
  const id = nextId;
  const request = { tool: params.name, jsonrpc_id: id, params: params.arguments || {}, now: new Date() };
  const schema = resultSchema || AS_READ;
  const direct = typeof client.request === 'function';
  let raw;
  try {
    const result = direct
      ? await client.request({ method: 'tools/call', params }, schema, options)
      : await client.callTool(params, resultSchema, options);
    raw = JSON.stringify({ jsonrpc: '2.0', id, result });
  } catch (error) {
    // The caller aborted: before sending, the SDK throws the signal's AbortError; while
    // the call runs, an McpError it made of the reason (REQUEST_TIMEOUT, no `timeout` in
    // its data), which is not the server's answer.
    if ((error && error.name === 'AbortError') || (options && options.signal && options.signal.aborted)) throw error;
    const kind = classify(error, direct);
    if (kind === 'server') {
      // The server's JSON-RPC error: judged as such; its message is not kept.
      raw = JSON.stringify({ jsonrpc: '2.0', id, error: { code: error.code, message: 'error' } });
    } else if (kind === 'refused') {
      // The SDK refused the result: nothing of it was verified.
      raw = '';
    } else {
      const admission = guard.admitTransportError(request, kind);
      return { result: admission.callToolResult, admission };
    }
  }
  const admission = await guard.admitAsync(request, Buffer.from(raw, 'utf8'));
  return { result: admission.callToolResult, admission };
}

module.exports = { callToolGuarded };
