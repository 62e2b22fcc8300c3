// A typed use of the package, compiled by tsc --noEmit --strict (ci/node-binding.sh): the
// declarations (index.d.ts, mcp.d.ts) describe what index.js and mcp.js export.
import { Guard, Guards, Admission, ContractError, AirlockError, RetryPolicy } from 'airlock-guard';
import { callToolGuarded } from 'airlock-guard/mcp';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

const guard: Guard = Guard.load('schemas/review_status', { adapter: 'typed', version: '1' });
const policy: RetryPolicy = guard.retryPolicy;
const limit: number = guard.maxBytes + 1;
const admission: Admission = guard.admit(
  { request_id: 'req.J7q94MkP', params: { change_id: 'CR-1042' }, now: new Date() },
  Buffer.from('{}'),
);
const code: string | null = admission.failureCode;
const agent: Record<string, unknown> = admission.agent;
async function later(guards: Guards): Promise<boolean> {
  const a = await guards.admitAsync({ tool: 'review_status', request_id: 'r', now: '2026-12-02T10:00:00Z' }, new Uint8Array());
  const { admission: last, attempts } = await guard.call({ request_id: 'r', now: new Date() }, async (n) => (n > 1 ? '{}' : Buffer.alloc(0)), { signal: AbortSignal.timeout(1000) });
  const client = { callTool: async () => ({}) };
  const fromFetch: Admission = guard.admit({ request_id: 'r', now: new Date() }, new ArrayBuffer(0));
  const forwarded: string = JSON.stringify(fromFetch);
  const mcp: boolean = guard.isMcp || forwarded.length > 0;
  const { result } = await callToolGuarded(client, guards, { name: 'change_review', arguments: { change_id: 'CR-1' } });
  return mcp && a.admitted && last.admitted && attempts.length > 0 && result !== null && policy.maxAttempts > 0 && limit > 0 && guard.shouldRetry(a, 1);
}
// The SDK's own Client is what the wrapper takes.
const viaSdk = (client: Client, guards: Guards) => callToolGuarded(client, guards, { name: 'change_review', arguments: { change_id: 'CR-1' } });
const isError = (e: unknown): boolean => e instanceof ContractError || e instanceof AirlockError;
export { code, agent, later, isError, viaSdk };
