#!/usr/bin/env node
'use strict';
// A worked HTTP adapter in Node.js with the guard in process (docs/node.md). The tool is
// `review_status`: fetch the review of a change from an HTTP API and give the agent only
// what the contract admits. Every response, honest or not, goes through `answer` (the
// guard under the contract's retry policy); so does every case `airlock check` sends when
// the adapter runs with --exec-protocol, which is how the harness tests the very code the
// HTTP path runs:
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

/**
 * The one judging path: the request, and `attempt(n)` giving try n's raw bytes (or
 * throwing the transport error that came instead), under the contract's retry policy; out
 * comes the agent's value as JSON text. The diagnostic goes to the operator's log (stderr),
 * never to the agent.
 */
async function answer(request, attempt) {
  const { admission } = await guard.call(request, attempt);
  if (admission.diagnostic) {
    process.stderr.write(`review_status: ${admission.diagnostic.split('\n')[0]}\n`);
  }
  return admission.agentJson;
}

/** The agent's value for the review of `changeId`, fetched from `baseUrl`. */
async function reviewStatus(baseUrl, changeId, requestId) {
  const request = { request_id: requestId, params: { change_id: changeId }, now: new Date() };
  return answer(request, async () => {
    const response = await fetch(`${baseUrl}/reviews/${encodeURIComponent(changeId)}`, {
      headers: { 'x-request-id': requestId },
      signal: AbortSignal.timeout(guard.retryPolicy.deadlineMs),
      // A redirect is an answer like any other, judged: not followed to where it points.
      redirect: 'manual',
    });
    // The status is not trusted either: the body must be an envelope the contract admits.
    // A failure is read by guard.call: a refused connection, a dropped one, the timeout.
    return readBounded(response.body, guard.maxBytes + 1);
  });
}

/**
 * A response body's bytes, `limit` at most: past the guard's limit the body is refused
 * whatever follows, and a hostile upstream does not choose how much the adapter holds.
 * (Leaving the loop early cancels the stream.)
 */
async function readBounded(stream, limit) {
  const chunks = [];
  let size = 0;
  if (stream) {
    for await (const chunk of stream) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) break;
    }
  }
  return Buffer.concat(chunks, size).subarray(0, limit);
}

/**
 * The exec protocol (docs/exec-protocol.md): a case per line in, an answer per line out.
 * A case's bytes (or its transport error) stand in for the upstream's, through `answer`,
 * the code the HTTP path runs. A line that is not a case gets the protocol's `error`
 * answer; the adapter goes on with the next.
 */
async function execProtocol() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let id = null;
    let out;
    try {
      const testCase = JSON.parse(line);
      id = typeof testCase.case === 'string' ? testCase.case : null;
      const agent = await answer(testCase.request, async () => {
        if (testCase.transport_error) {
          throw Object.assign(new Error(testCase.transport_error), { transport: testCase.transport_error });
        }
        return Buffer.from(testCase.response_b64, 'base64');
      });
      out = `{"case":${JSON.stringify(id)},"agent":${agent}}`;
    } catch (error) {
      out = JSON.stringify({ case: id, error: String((error && error.message) || error) });
    }
    process.stdout.write(`${out}\n`);
  }
}

module.exports = { answer, reviewStatus };

if (require.main === module) {
  if (process.argv.includes('--exec-protocol')) {
    execProtocol();
  } else {
    const [baseUrl, changeId] = process.argv.slice(2);
    reviewStatus(baseUrl, changeId, `req.${Date.now()}`).then((agent) => console.log(agent));
  }
}
