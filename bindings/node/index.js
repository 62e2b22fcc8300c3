'use strict';
// The Airlock guard for Node.js. The native addon (airlock_guard.node, built from
// bindings/node/src/lib.rs) judges; this file gives it a JavaScript surface: plain objects
// in, typed errors, the agent's value parsed from the exact JSON text the Rust guard
// writes.

const native = require('./airlock_guard.node');

/** The base of every error this package throws. */
class AirlockError extends Error {
  constructor(message) {
    super(message);
    this.name = this.constructor.name;
  }
}
/** A contract folder that cannot be loaded (the message names the file and why). */
class ContractError extends AirlockError {}
/** A request that is not the exec protocol's request object. */
class RequestError extends AirlockError {}
/** No contract for a request's tool, or an unknown transport error. */
class RoutingError extends AirlockError {}

const TAGS = { contract: ContractError, request: RequestError, transport: RoutingError };

function rethrow(error) {
  const match = /^\[(contract|request|transport)\] ([\s\S]*)$/.exec(error && error.message);
  if (match) throw new TAGS[match[1]](match[2]);
  throw error;
}

function requestJson(request) {
  if (typeof request === 'string') return request;
  if (request === null || typeof request !== 'object') {
    throw new RequestError('a request is an object: {tool, request_id, params, now}');
  }
  const wire = { ...request };
  if (wire.now instanceof Date) wire.now = wire.now.toISOString();
  return JSON.stringify(wire);
}

function body(raw) {
  if (Buffer.isBuffer(raw)) return raw;
  if (raw instanceof Uint8Array) return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (typeof raw === 'string') return Buffer.from(raw, 'utf8');
  throw new TypeError('a response body is a Buffer, a Uint8Array or a string');
}

/**
 * What the guard decided for one response. The addon gives one string per judgement,
 * owned by the JavaScript heap (`packed` in src/lib.rs): a head, then the agent's JSON,
 * the audit line, the CallToolResult JSON and the diagnostic, separated by NUL (which
 * JSON text never holds unescaped). Each field is a slice of it, taken when read.
 */
class Admission {
  constructor(packed) {
    this._packed = packed;
    this._ends = null;
  }
  /** Part `i` (1: agent, 2: audit, 3: CallToolResult, 4: diagnostic); found when first asked. */
  _part(i) {
    if (this._ends === null) {
      const ends = [];
      for (let at = -1, k = 0; k < 4; k += 1) ends.push((at = this._packed.indexOf('\0', at + 1)));
      ends.push(this._packed.length);
      this._ends = ends;
    }
    return this._packed.slice(this._ends[i - 1] + 1, this._ends[i]);
  }
  /** Whether the response was admitted (a success or a valid failure envelope). */
  get admitted() {
    return this._packed[0] === 'A';
  }
  /** The agent's value as the exact JSON text the Rust guard gives. */
  get agentJson() {
    return this._part(1);
  }
  /** The failure code the agent sees, or null for a success. */
  get failureCode() {
    return this._packed[1] === '-' ? null : this._packed.slice(4, this._packed.indexOf('\0'));
  }
  /** Whether that failure is retryable, or null for a success. */
  get retryable() {
    return this._packed[1] === '-' ? null : this._packed[1] === 'r';
  }
  /** The operator's diagnostic: never part of the agent's value. Log it, do not forward it. */
  get diagnostic() {
    return this._packed[2] === 'd' ? this._part(4) : null;
  }
  /** The audit record as one JSON line. */
  get auditJson() {
    return this._part(2);
  }
  /** The agent's value: the projected success or the fixed failure, nothing else. */
  get agent() {
    return JSON.parse(this.agentJson);
  }
  /** For an MCP contract: the agent's value as a fresh CallToolResult, else null. */
  get callToolResult() {
    return this._packed[3] === 'c' ? JSON.parse(this._part(3)) : null;
  }
  /** The audit record. */
  get audit() {
    return JSON.parse(this.auditJson);
  }
}

/** One contract's guard: `Guard.load("schemas/review_status")`. */
class Guard {
  constructor(inner) {
    this._inner = inner;
  }
  /**
   * Load a contract folder. `options.adapter` / `options.version` name the adapter in the
   * audit record. Throws ContractError naming the file.
   */
  static load(dir, options = {}) {
    try {
      return new Guard(native.NativeGuard.load(String(dir), options.adapter, options.version));
    } catch (error) {
      rethrow(error);
    }
  }
  /** The contract's tool. */
  get tool() {
    return this._inner.tool;
  }
  /** The contract's retry policy: {maxAttempts, deadlineMs, retryable: [codes]}. */
  get retryPolicy() {
    const p = JSON.parse(this._inner.retryPolicyJson());
    return { maxAttempts: p.max_attempts, deadlineMs: p.deadline_ms, retryable: p.retryable };
  }
  /** Judge one raw response (Buffer, Uint8Array or string) for `request`. */
  admit(request, raw) {
    try {
      return new Admission(this._inner.admit(requestJson(request), body(raw)));
    } catch (error) {
      rethrow(error);
    }
  }
  /** `admit` off the event loop (the libuv thread pool): a Promise of the Admission. */
  async admitAsync(request, raw) {
    let task;
    try {
      task = this._inner.admitAsync(requestJson(request), body(raw));
    } catch (error) {
      rethrow(error);
    }
    return new Admission(await task);
  }
  /** Judge a call that got no response: `kind` is "timeout", "connection_refused", … */
  admitTransportError(request, kind) {
    try {
      return new Admission(this._inner.admitTransportError(requestJson(request), String(kind)));
    } catch (error) {
      rethrow(error);
    }
  }
  /**
   * Whether to try again after `admission`, the `attempt`-th (from 1), `elapsedMs` into
   * the call: as `Guard::call` decides in Rust, the agent's failure is retryable (the
   * contract's policy made it so), attempts remain and the deadline has not passed.
   */
  shouldRetry(admission, attempt, elapsedMs = 0) {
    const policy = this.retryPolicy;
    return admission.retryable === true && attempt < policy.maxAttempts && elapsedMs < policy.deadlineMs;
  }
  /**
   * Call an upstream under the contract's retry policy, judging every attempt afresh.
   * `attempt(n)` returns (or resolves to) the raw body of try `n`, or throws; a thrown
   * error is the transport error its `transport` property names ("timeout",
   * "connection_reset", "unreachable"; default "unreachable"). Resolves to
   * {admission, attempts} where admission is the last attempt's.
   */
  async call(request, attempt) {
    const started = Date.now();
    const attempts = [];
    for (let n = 1; ; n += 1) {
      let admission;
      try {
        admission = await this.admitAsync(request, await attempt(n));
      } catch (error) {
        if (error instanceof AirlockError) throw error;
        const kind = (error && error.transport) || 'unreachable';
        admission = this.admitTransportError(request, kind);
      }
      attempts.push(admission);
      if (!this.shouldRetry(admission, n, Date.now() - started)) {
        return { admission, attempts };
      }
    }
  }
}

/** Several contracts, each request routed by its `tool`: `Guards.load([dirs])`. */
class Guards {
  constructor(guards) {
    this._byTool = new Map(guards.map((g) => [g.tool, g]));
  }
  static load(dirs, options = {}) {
    return new Guards(dirs.map((dir) => Guard.load(dir, options)));
  }
  /** The guard of `tool`, or undefined. */
  get(tool) {
    return this._byTool.get(tool);
  }
  /** The tools served. */
  get tools() {
    return [...this._byTool.keys()];
  }
  _route(request) {
    const tool = typeof request === 'string' ? JSON.parse(request).tool : request && request.tool;
    const guard = this._byTool.get(tool);
    if (!guard) throw new RoutingError(`no contract for tool ${JSON.stringify(tool)}`);
    return guard;
  }
  admit(request, raw) {
    return this._route(request).admit(request, raw);
  }
  admitAsync(request, raw) {
    return this._route(request).admitAsync(request, raw);
  }
}

module.exports = { Guard, Guards, Admission, AirlockError, ContractError, RequestError, RoutingError };
