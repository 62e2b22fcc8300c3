'use strict';
// The installed package (`npm install` of the packed addon), run by ci/node-binding.sh:
// AIRLOCK_REPO is the repository (its shipped contracts and corpora), AIRLOCK the
// `airlock` binary of the same build.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Guard, Guards, ContractError, RequestError, RoutingError, AirlockError } = require('airlock-guard');

const repo = process.env.AIRLOCK_REPO;
const at = (...parts) => path.join(repo, ...parts);
const review = () => Guard.load(at('schemas/review_status'), { adapter: 'node-test', version: '1' });
const request = () => JSON.parse(fs.readFileSync(at('corpora/review_status/request.json'), 'utf8'));

test('a contract that does not load throws ContractError naming the file', () => {
  assert.throws(() => Guard.load(at('schemas/no_such_tool')), (e) => e instanceof ContractError && e instanceof AirlockError && e.message.includes('no_such_tool'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-node-'));
  fs.writeFileSync(path.join(dir, 'contract.toml'), 'tool = "x"\nversion = 1\n[limits]\nmax_bytes = "many"\n');
  assert.throws(() => Guard.load(dir), (e) => e instanceof ContractError && e.message.includes('contract.toml'));
});

test('an honest answer is admitted and projected; the agent value is the Rust text', () => {
  const body = fs.readFileSync(at('corpora/review_status/accepted/success_approved_compact.json'));
  const admission = review().admit(request(), body);
  assert.equal(admission.admitted, true);
  assert.equal(admission.failureCode, null);
  assert.equal(admission.diagnostic, null);
  assert.deepEqual(admission.agent.data, { change_id: 'CR-1042', decision: 'approved', reviewed_by: 'dana.okafor' });
  assert.equal(admission.audit.verdict, 'admitted');
  assert.equal(admission.audit.tool, 'review_status');
});

test('a hostile answer gets the fixed failure and nothing of its text', () => {
  const body = fs.readFileSync(at('corpora/review_status/near_miss/extra_property_admin_override_with_instructions.json'));
  const admission = review().admit(request(), body);
  assert.equal(admission.admitted, false);
  assert.equal(admission.failureCode, 'INVALID_RESPONSE');
  assert.equal(admission.agentJson, '{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"failure","error":{"code":"INVALID_RESPONSE","retryable":false}}');
  for (const word of ['admin_override', 'Ignore', 'message']) assert.ok(!admission.agentJson.includes(word));
  assert.match(admission.diagnostic, /additionalProperties/);
});

test('a duplicate member is refused, whichever value a last-key-wins parser would keep', () => {
  const body = Buffer.from('{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"success","data":{"change_id":"CR-1042","decision":"rejected","decision":"approved","reviewed_by":"dana.okafor"}}');
  const admission = review().admit(request(), body);
  assert.equal(admission.failureCode, 'INVALID_RESPONSE');
  assert.equal(admission.audit.stage, 'parse');
});

test('admitAsync judges off the event loop and gives the same admission', async () => {
  const guard = review();
  const body = fs.readFileSync(at('corpora/review_status/accepted/success_pending_pretty.json'));
  const [a, b] = await Promise.all([guard.admitAsync(request(), body), guard.admitAsync(request(), new Uint8Array(body))]);
  assert.equal(a.agentJson, guard.admit(request(), body).agentJson);
  assert.equal(b.agentJson, a.agentJson);
});

test('bad requests and unknown tools are typed errors', () => {
  assert.throws(() => review().admit({ request_id: 'r', now: 'yesterday' }, '{}'), RequestError);
  assert.throws(() => review().admit(null, '{}'), RequestError);
  assert.throws(() => review().admitTransportError(request(), 'gremlins'), RoutingError);
  const guards = Guards.load([at('schemas/review_status'), at('schemas/quota_usage')]);
  assert.deepEqual(guards.tools.sort(), ['quota_usage', 'review_status']);
  assert.throws(() => guards.admit({ ...request(), tool: 'nope' }, '{}'), RoutingError);
  assert.equal(guards.admit({ ...request(), tool: 'review_status' }, '{}').failureCode, 'INVALID_RESPONSE');
});

test('a synchronous loop of admissions holds no native memory while it runs', () => {
  // Node frees an addon's native memory only between turns of the event loop; when each
  // admission held some (about 1 KB), this loop grew by about 65 MB (240 MB with
  // diagnostics), and a batch job's by as much as it had admissions.
  const guard = review();
  const body = fs.readFileSync(at('corpora/review_status/accepted/success_approved_compact.json'));
  const req = request();
  for (let i = 0; i < 1000; i += 1) guard.admit(req, body);
  const before = process.memoryUsage().rss;
  let admitted = 0;
  for (let i = 0; i < 60_000; i += 1) admitted += guard.admit(req, body).admitted ? 1 : 0;
  const grown = (process.memoryUsage().rss - before) / 1e6;
  assert.equal(admitted, 60_000);
  assert.ok(grown < 32, `RSS grew by ${grown.toFixed(0)} MB over 60,000 admissions`);
});

test('call retries under the contract policy and judges every attempt', async () => {
  const guard = review();
  const policy = guard.retryPolicy;
  assert.ok(policy.maxAttempts >= 2, JSON.stringify(policy));
  const good = fs.readFileSync(at('corpora/review_status/accepted/success_approved_compact.json'));
  let tries = 0;
  const { admission, attempts } = await guard.call(request(), async (n) => {
    tries = n;
    if (n === 1) throw Object.assign(new Error('socket hang up'), { transport: 'connection_reset' });
    return good;
  });
  assert.equal(tries, 2);
  assert.equal(attempts.length, 2);
  assert.equal(attempts[0].failureCode, 'UPSTREAM_UNAVAILABLE');
  assert.equal(admission.admitted, true);
  const never = await guard.call(request(), async () => { throw new Error('down'); });
  assert.equal(never.attempts.length, policy.maxAttempts);
  assert.equal(never.admission.failureCode, 'UPSTREAM_UNAVAILABLE');
});

test('an MCP contract gives the agent a fresh CallToolResult', () => {
  const guard = Guard.load(at('schemas/change_review'));
  const req = JSON.parse(fs.readFileSync(at('corpora/change_review/request.json'), 'utf8'));
  const dir = at('corpora/change_review/accepted');
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.json') && !f.endsWith('.request.json'));
  const override = path.join(dir, file.replace(/\.json$/, '.request.json'));
  const admission = guard.admit(fs.existsSync(override) ? JSON.parse(fs.readFileSync(override, 'utf8')) : req, fs.readFileSync(path.join(dir, file)));
  assert.equal(admission.admitted, true, admission.diagnostic);
  assert.equal(admission.callToolResult.isError, false);
  assert.deepEqual(admission.callToolResult.structuredContent, admission.agent.data);
});
