'use strict';
// The Node binding against JSON.parse + ajv (Draft 2020-12, compiled once, ajv-formats),
// per call, side by side in one run: the shipped contracts' success fixtures (as
// benches/benches/admit.rs takes them) and a 1 MB body of the bench contract
// bulk_status_large. The guard does more per call (byte limit, strict parse with
// duplicates refused, binding, checks, projection, audit); the baseline only parses and
// validates. The Admission builds JavaScript values when read, so the guard is timed
// twice: `admit` alone, and with its `.agent` read (the agent's value as an object, as
// the baseline's JSON.parse gives one).
// Prints a Markdown table: µs per call each, and the ratio (baseline / guard: above 1,
// the guard is faster). Run by ci/bindings-bench.sh (a release addon).
const fs = require('node:fs');
const path = require('node:path');
const Ajv2020 = require('ajv/dist/2020').default;
const addFormats = require('ajv-formats').default;
const { Guard } = require('airlock-guard');

const repo = process.env.AIRLOCK_REPO || process.cwd();

function schemaOf(dir) {
  const version = /^version\s*=\s*(\d+)/m.exec(fs.readFileSync(path.join(dir, 'contract.toml'), 'utf8'))[1];
  return JSON.parse(fs.readFileSync(path.join(dir, `v${version}.schema.json`), 'utf8'));
}

function firstSuccess(tool) {
  const dir = path.join(repo, 'corpora', tool, 'accepted');
  for (const file of fs.readdirSync(dir).sort()) {
    if (!file.endsWith('.json') || file.endsWith('.request.json')) continue;
    const body = fs.readFileSync(path.join(dir, file));
    if (JSON.parse(body).outcome !== 'success') continue;
    const override = path.join(dir, file.replace(/\.json$/, '.request.json'));
    const request = fs.existsSync(override) ? override : path.join(repo, 'corpora', tool, 'request.json');
    return { body, request: JSON.parse(fs.readFileSync(request, 'utf8')) };
  }
  throw new Error(`${tool}: no success fixture`);
}

// The same body as benches/src/lib.rs `bulk_body`.
function bulkBody(tool, maxLen) {
  const head = `{"tool":"${tool}","request_id":"req.BenchRun1","outcome":"success","data":{"batch_id":"batch_bench","total":`;
  const items = [];
  let length = 0;
  for (let count = 0; ; count += 1) {
    const state = ['queued', 'running', 'done', 'failed'][count % 4];
    const pad2 = (n) => String(n).padStart(2, '0');
    const item = `${count === 0 ? '' : ','}{"id":"item_${count}","state":"${state}","score":0.${String(count % 1000).padStart(3, '0')},"observed_at":"2026-12-02T09:${pad2(count % 60)}:${pad2((count * 7) % 60)}Z"}`;
    if (head.length + String(count).length + 10 + length + item.length + 3 > maxLen) {
      return Buffer.from(`${head}${count},"items":[${items.join('')}]}}`);
    }
    items.push(item);
    length += item.length;
  }
}

function cases() {
  const out = [];
  for (const tool of ['review_status', 'job_run_status', 'deploy_status', 'identity_lookup']) {
    const dir = path.join(repo, 'schemas', tool);
    out.push({ name: tool, dir, schema: schemaOf(dir), ...firstSuccess(tool) });
  }
  const dir = path.join(repo, 'benches', 'contracts', 'bulk_status_large');
  out.push({
    name: 'bulk_1mb',
    dir,
    schema: schemaOf(dir),
    body: bulkBody('bulk_status_large', 1_000_000),
    request: { request_id: 'req.BenchRun1', params: { batch_id: 'batch_bench' }, now: '2026-12-02T10:00:00Z' },
  });
  return out;
}

/** Median µs per call of `fn` over `rounds` rounds of `n` calls. */
function time(fn, n, rounds) {
  const samples = [];
  for (let r = 0; r < rounds; r += 1) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i += 1) fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1000 / n);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

const rows = [];
for (const c of cases()) {
  const guard = Guard.load(c.dir);
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  const validate = ajv.compile(c.schema);
  const requestText = JSON.stringify(c.request);
  const admitted = guard.admit(requestText, c.body).admitted;
  const valid = validate(JSON.parse(c.body.toString('utf8')));
  if (!admitted || !valid) throw new Error(`${c.name}: guard admitted ${admitted}, ajv valid ${valid}`);
  const n = c.body.length > 100_000 ? 20 : 2000;
  const rounds = 9;
  // Warm both, then alternate rounds so neither gets the quieter machine.
  time(() => guard.admit(requestText, c.body), n, 2);
  time(() => validate(JSON.parse(c.body.toString('utf8'))), n, 2);
  time(() => guard.admit(requestText, c.body).agent, n, 2);
  let g = [];
  let a = [];
  let b = [];
  for (let k = 0; k < 3; k += 1) {
    g.push(time(() => guard.admit(requestText, c.body), n, rounds));
    a.push(time(() => guard.admit(requestText, c.body).agent, n, rounds));
    b.push(time(() => validate(JSON.parse(c.body.toString('utf8'))), n, rounds));
  }
  g = Math.min(...g);
  a = Math.min(...a);
  b = Math.min(...b);
  rows.push(
    `| ${c.name} | ${c.body.length} B | ${g.toFixed(1)} µs | ${a.toFixed(1)} µs | ${b.toFixed(1)} µs | ${(b / g).toFixed(2)}× | ${(b / a).toFixed(2)}× |`,
  );
}
console.log('| case | body | guard.admit | admit + .agent | JSON.parse + ajv | baseline / admit | baseline / (admit + .agent) |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
