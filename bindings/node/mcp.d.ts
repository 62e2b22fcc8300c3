import type { Admission, Guard, Guards } from './index';

/**
 * A tool call through the MCP TypeScript SDK's `Client` (what
 * `client.callTool(params, resultSchema, options)` sends) with the result judged by the
 * guard of the tool's MCP contract before the application sees it. `result` is a fresh CallToolResult: the projected `structuredContent`, or the
 * fixed failure with `isError: true`. The SDK's `Client` is called through its `request`
 * (`tools/call`), so that the guard, not the SDK's output-schema check, judges the
 * result; a client without `request` through `callTool`. Throws RoutingError when the
 * tool has no MCP tool contract among `guards`.
 */
export declare function callToolGuarded(
  client: {
    callTool(params: { name: string; arguments?: Record<string, unknown> }, resultSchema?: any, options?: any): Promise<unknown>;
    request?(request: { method: 'tools/call'; params: { name: string; arguments?: Record<string, unknown> } }, resultSchema: any, options?: any): Promise<unknown>;
  },
  guards: Guard | Guards,
  params: { name: string; arguments?: Record<string, unknown> },
  resultSchema?: unknown,
  options?: unknown,
): Promise<{ result: Record<string, unknown>; admission: Admission }>;
