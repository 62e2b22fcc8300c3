#!/usr/bin/env node
'use strict';
// A worked HTTP adapter in Node.js with the guard in process (docs/node.md). The tool is
// `review_status`: fetch the review of a change from an HTTP API and give the agent only
// what the contract admits. Every response, honest or not, goes through `judge`; so does
// every case `airlock check` sends when the adapter runs with --exec-protocol, which is
// how the harness tests the very code the HTTP path runs:
//
//   airlock check --contract schemas/review_status --adapter-cmd "node docs/examples/node_adapter.js --exec-protocol"
//
// Needs the airlock-guard package (npm install airlock-guard, or NODE_PATH pointing at
// the node_modules that has it).

const readline = require('node:readline');
const path = require('node:path');
const { Guard } = require('airlock-guard');

const schemas = process.env.AIRLOCK_SCHEMAS || path.join(process.cwd(), 'schemas');
const guard = Guard.load(path.join(schemas, 'review_status'), { adapter: 'node-review-adapter', version: '1.0.0' });

/** The one judging path: raw bytes in, the agent's value (JSON text) out. */
async function judge(request, body) {
  const admission = await guard.admitAsync(request, body);
  if (admission.diagnostic) {
    // The operator's side: the diagnostic and the audit go to the log, never to the agent.
    process.stderr.write(`review_status: ${admission.diagnostic.split('\n')[0]}\n`);
  }
  return admission.agentJson;
}

/** The agent's value for the review of `changeId`, fetched from `baseUrl`. */
async function reviewStatus(baseUrl, changeId, requestId) {
  const request = { request_id: requestId, params: { change_id: changeId }, now: new Date() };
  const { admission } = await guard.call(request, async () => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), guard.retryPolicy.deadlineMs);
    try {
      const response = await fetch(`${baseUrl}/reviews/${encodeURIComponent(changeId)}`, {
        headers: { 'x-request-id': requestId },
        signal: controller.signal,
      });
      // The status is not trusted either: the body must be an envelope the contract admits.
      return Buffer.from(await response.arrayBuffer());
    } catch (error) {
      throw Object.assign(error, { transport: error.name === 'AbortError' ? 'timeout' : 'unreachable' });
    } finally {
      clearTimeout(timer);
    }
  });
  return admission.agentJson;
}

/** The exec protocol (docs/exec-protocol.md): a case per line in, an answer per line out. */
async function execProtocol() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const testCase = JSON.parse(line);
    const agent = testCase.transport_error
      ? guard.admitTransportError(testCase.request, testCase.transport_error).agentJson
      : await judge(testCase.request, Buffer.from(testCase.response_b64, 'base64'));
    process.stdout.write(`{"case":${JSON.stringify(testCase.case)},"agent":${agent}}\n`);
  }
}

module.exports = { judge, reviewStatus };

if (require.main === module) {
  if (process.argv.includes('--exec-protocol')) {
    execProtocol();
  } else {
    const [baseUrl, changeId] = process.argv.slice(2);
    reviewStatus(baseUrl, changeId, `req.${Date.now()}`).then((agent) => console.log(agent));
  }
}
