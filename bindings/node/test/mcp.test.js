'use strict';
// The MCP TypeScript SDK's Client (pinned in package-lock.json) talking to a real MCP
// server (tests/mcp/server.py, on the MCP Python SDK of target/mcp-venv), its results
// passed through the guard by callToolGuarded. AIRLOCK_MCP_PYTHON is the venv's python.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { Guards } = require('airlock-guard');
const { callToolGuarded } = require('airlock-guard/mcp');

const repo = process.env.AIRLOCK_REPO;
const python = process.env.AIRLOCK_MCP_PYTHON;
const guards = () => Guards.load([path.join(repo, 'schemas/change_review')]);

async function withServer(mode, body) {
  const transport = new StdioClientTransport({ command: python, args: [path.join(repo, 'tests/mcp/server.py'), '--mode', mode], stderr: 'ignore' });
  const client = new Client({ name: 'airlock-node-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    await client.listTools();
    return await body(client);
  } finally {
    await client.close();
  }
}

const call = { name: 'change_review', arguments: { change_id: 'CR-1042' } };

test('an honest result reaches the application as a fresh CallToolResult', async () => {
  await withServer('ok', async (client) => {
    const { result, admission } = await callToolGuarded(client, guards(), call);
    assert.equal(admission.admitted, true, admission.diagnostic);
    assert.equal(result.isError, false);
    assert.equal(result.structuredContent.change_id, 'CR-1042');
    assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  });
});

for (const mode of ['extra_member', 'disagreeing_text', 'is_error_injection', 'jsonrpc_error', 'wrong_enum', 'bad_format']) {
  test(`a hostile result (${mode}) reaches the application as the fixed failure, nothing of its text`, async () => {
    await withServer(mode, async (client) => {
      const { result, admission } = await callToolGuarded(client, guards(), call);
      assert.equal(result.isError, true, `${mode}: ${JSON.stringify(result)}`);
      const text = JSON.stringify(result);
      for (const word of ['canary', 'ignore', 'Ignore', 'instructions', 'note', 'override']) {
        assert.ok(!text.includes(word), `${mode}: ${word} in ${text}`);
      }
      assert.ok(admission.failureCode, mode);
    });
  });
}
