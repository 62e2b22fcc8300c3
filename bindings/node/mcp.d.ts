import type { Admission, Guard, Guards } from './index';

/**
 * `client.callTool(params, resultSchema, options)` (the MCP TypeScript SDK's `Client`)
 * with the result judged by the guard of the tool's MCP contract before the application
 * sees it. `result` is a fresh CallToolResult: the projected `structuredContent`, or the
 * fixed failure with `isError: true`.
 */
export declare function callToolGuarded(
  client: { callTool(params: { name: string; arguments?: Record<string, unknown> }, resultSchema?: unknown, options?: unknown): Promise<unknown> },
  guards: Guard | Guards,
  params: { name: string; arguments?: Record<string, unknown> },
  resultSchema?: unknown,
  options?: unknown,
): Promise<{ result: Record<string, unknown>; admission: Admission }>;
