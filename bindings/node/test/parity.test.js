'use strict';
// Parity with the Rust guard: every shipped contract's fixtures and the adversary's
// deterministic variants (`airlock mutate --cases 0`: the manifest holds the reference's
// verdict and its agent value as exact JSON text) judged by this package must give the
// same verdict and the same agent value, byte for byte.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { Guard } = require('airlock-guard');

const repo = process.env.AIRLOCK_REPO;
const airlock = process.env.AIRLOCK;
const VERDICT = { admitted: 'admit', upstream_failure: 'admit', transport_failure: 'transport', rejected: 'reject' };

const contracts = fs.readdirSync(path.join(repo, 'schemas')).filter((d) => fs.existsSync(path.join(repo, 'schemas', d, 'contract.toml')));

test('every shipped contract is covered', () => {
  assert.ok(contracts.length >= 9, contracts.join(','));
});

for (const tool of contracts) {
  test(`parity: ${tool}`, () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), `airlock-parity-${tool}-`));
    execFileSync(airlock, ['mutate', '--contract', `schemas/${tool}`, '--cases', '0', '--out', out], { cwd: repo, stdio: ['ignore', 'ignore', 'pipe'] });
    const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    const guard = Guard.load(path.join(repo, 'schemas', tool));
    let compared = 0;
    for (const v of manifest.variants) {
      const request = fs.readFileSync(path.join(out, v.request_file), 'utf8');
      const admission = v.file === null
        ? guard.admitTransportError(request, v.transport_error)
        : guard.admit(request, fs.readFileSync(path.join(out, v.file)));
      assert.equal(admission.agentJson, v.agent, `${tool} ${v.id}: agent value`);
      assert.equal(VERDICT[admission.audit.verdict], v.expected, `${tool} ${v.id}: verdict`);
      compared += 1;
    }
    assert.ok(compared > 50, `${tool}: only ${compared} variants`);
    fs.rmSync(out, { recursive: true, force: true });
  });
}
