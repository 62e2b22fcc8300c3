'use strict';
// The Airlock guard for Node.js. The native addon (airlock_guard.node, built from
// bindings/node/src/lib.rs) judges; this file gives it a JavaScript surface: plain objects
// in, typed errors, the agent's value parsed from the exact JSON text the Rust guard
// writes.

const url = require('node:url');
const util = require('node:util');

const { types } = util;
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
  if (typeof request === 'string') {
    // The addon reads text as UTF-8, writing U+FFFD for a lone surrogate: a parameter the
    // caller never sent. (An object's are escaped by JSON.stringify, and refused.)
    if (LONE_SURROGATE.test(request)) throw new RequestError('the request holds a lone surrogate: it is not well-formed text');
    return request;
  }
  if (request === null || typeof request !== 'object') {
    throw new RequestError('a request is an object: {tool, request_id, params, now}');
  }
  const wire = { ...request };
  if (wire.now instanceof Date || types.isDate(wire.now)) {
    if (Number.isNaN(wire.now.getTime())) throw new RequestError('the request\'s `now` is an invalid Date');
    wire.now = wire.now.toISOString();
  }
  try {
    return JSON.stringify(wire);
  } catch (error) {
    // A BigInt or a cycle in `params`: not a request the exec protocol can carry.
    throw new RequestError(`the request is not JSON: ${error.message}`);
  }
}

// Lone surrogates (a string cut in the middle of a pair): well-formed text has none.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A string's bytes as UTF-8, except that a lone surrogate is written as the three bytes it
 * would take (WTF-8), which no UTF-8 decoder accepts: the guard refuses the body, as it
 * refuses the bytes of a lone surrogate. (`Buffer.from` would quietly write U+FFFD in its
 * place, and the guard would judge text the upstream never sent.)
 */
function stringBody(text) {
  const wellFormed = typeof text.isWellFormed === 'function' ? text.isWellFormed() : !LONE_SURROGATE.test(text);
  if (wellFormed) return Buffer.from(text, 'utf8');
  const parts = [];
  let from = 0;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = text.charCodeAt(i + 1);
    if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      i += 1;
      continue;
    }
    parts.push(Buffer.from(text.slice(from, i), 'utf8'));
    parts.push(Buffer.from([0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]));
    from = i + 1;
  }
  parts.push(Buffer.from(text.slice(from), 'utf8'));
  return Buffer.concat(parts);
}

function body(raw) {
  let view;
  if (Buffer.isBuffer(raw)) view = raw;
  // Any typed array or DataView, from this realm or another (vm, a test runner's context).
  else if (ArrayBuffer.isView(raw)) view = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  // Memory another thread may write while the guard reads it: judged from a copy, so the
  // bytes validated are the bytes projected.
  else if (types.isSharedArrayBuffer(raw)) return Buffer.from(new Uint8Array(raw));
  // What `(await fetch(url)).arrayBuffer()` gives.
  else if (types.isAnyArrayBuffer(raw)) return Buffer.from(raw);
  else if (typeof raw === 'string') return stringBody(raw);
  else throw new TypeError('a response body is a Buffer, a Uint8Array (or any ArrayBuffer view), an ArrayBuffer or a string');
  return types.isSharedArrayBuffer(view.buffer) ? Buffer.from(view) : view;
}

/**
 * What the guard decided for one response. The addon gives one string per judgement,
 * owned by the JavaScript heap (`packed` in src/lib.rs): a head, then the agent's JSON,
 * the audit line, the CallToolResult JSON, the diagnostic and its masked line, separated
 * by NUL (which none of them holds unescaped). Each field is a slice of it, taken when
 * read.
 */
class Admission {
  // Private: a copy of the object (`{...admission}`, `structuredClone`) or an inspection
  // without `toJSON` and the custom inspect never carries the diagnostic.
  #packed;
  #ends = null;
  constructor(packed) {
    this.#packed = packed;
  }
  /** Part `i` (1: agent, 2: audit, 3: CallToolResult, 4: diagnostic, 5: masked); found when first asked. */
  _part(i) {
    if (this.#ends === null) {
      const ends = [];
      for (let at = -1, k = 0; k < 5; k += 1) ends.push((at = this.#packed.indexOf('\0', at + 1)));
      ends.push(this.#packed.length);
      this.#ends = ends;
    }
    return this.#packed.slice(this.#ends[i - 1] + 1, this.#ends[i]);
  }
  /** Whether the response was admitted (a success or a valid failure envelope). */
  get admitted() {
    return this.#packed[0] === 'A';
  }
  /** The agent's value as the exact JSON text the Rust guard gives. */
  get agentJson() {
    return this._part(1);
  }
  /** The failure code the agent sees, or null for a success. */
  get failureCode() {
    return this.#packed[1] === '-' ? null : this.#packed.slice(4, this.#packed.indexOf('\0'));
  }
  /** Whether that failure is retryable, or null for a success. */
  get retryable() {
    return this.#packed[1] === '-' ? null : this.#packed[1] === 'r';
  }
  /** The operator's diagnostic: never part of the agent's value. Log it, do not forward it. */
  get diagnostic() {
    return this.#packed[2] === 'd' ? this._part(4) : null;
  }
  /** The diagnostic's line without the input values it quotes: for logs others read. */
  get diagnosticMasked() {
    return this.#packed[2] === 'd' ? this._part(5) : null;
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
    return this.#packed[3] === 'c' ? JSON.parse(this._part(3)) : null;
  }
  /** The audit record. */
  get audit() {
    return JSON.parse(this.auditJson);
  }
  /**
   * `JSON.stringify(admission)` gives the agent's value and nothing else: an adapter that
   * forwards or prints the admission itself never hands the diagnostic (which may quote
   * the rejected body) to the agent.
   */
  toJSON() {
    return this.agent;
  }
  /** `console.log(admission)`: the verdict and the agent's value, not the diagnostic. */
  [util.inspect.custom](depth, options) {
    const shown = { admitted: this.admitted, failureCode: this.failureCode, retryable: this.retryable, agent: this.agent };
    return `Admission ${util.inspect(shown, options)}`;
  }
}

/** A contract folder's path: a string or a `file:` URL. */
function folder(dir) {
  if (typeof dir === 'string') return dir;
  if (dir instanceof URL) return url.fileURLToPath(dir);
  throw new TypeError(`a contract folder is a path (a string or a file: URL), not ${typeof dir}`);
}

// Node's errors name what failed by a code, on the error or on its `cause`: fetch (undici)
// throws TypeError('fetch failed') whose cause has the socket's code.
const TRANSPORT_CODES = new Map([
  ...['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'].map((c) => [c, 'timeout']),
  ...['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'].map((c) => [c, 'unreachable']),
  ...['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'].map((c) => [c, 'connection_reset']),
]);
// Errors of the caller's own code, not of the upstream (by name: from any realm).
const BUGS = new Set(['ReferenceError', 'SyntaxError', 'EvalError']);
// Node's argument errors (ERR_INVALID_URL, ERR_INVALID_PROTOCOL, ERR_INVALID_CHAR,
// ERR_INVALID_HTTP_TOKEN, ERR_INVALID_ARG_TYPE, …), and fetch's URL it cannot fetch.
const BUG_CODE = /^ERR_(INVALID_|UNESCAPED_CHARACTERS$)/;
const BUG_CAUSES = new Set(['unknown scheme', 'bad port']);
const CAUSE_LINKS = 8;

/**
 * What an error thrown by `call`'s attempt stands for: a transport error kind, or null for
 * an error that is the caller's (thrown again). Its `transport` property says so first;
 * a TypeError without a cause is the caller's (fetch's own failures have one); then the
 * first error along its `cause` chain that tells: an abort (`AbortError`, as an
 * `AbortController` makes it, or `TimeoutError`, as `AbortSignal.timeout` makes it) is a
 * timeout, a code of TRANSPORT_CODES its kind, an argument error (BUG_CODE, fetch's
 * "unknown scheme") or an error of BUGS the caller's. Anything else is `unreachable`.
 */
function transportOf(error) {
  if (error instanceof AirlockError) return null;
  if (error != null && error.transport) return String(error.transport);
  if (error != null && error.name === 'TypeError' && error.cause === undefined) return null;
  // fetch's failure after it sent the request: a URL that does not parse under it is a
  // redirect's `Location`, the upstream's (the caller's own is "Failed to parse URL").
  const sent = error != null && error.name === 'TypeError' && error.message === 'fetch failed';
  const seen = new Set();
  for (let e = error, i = 0; e != null && typeof e === 'object' && i < CAUSE_LINKS && !seen.has(e); i += 1, e = e.cause) {
    seen.add(e);
    if (e.name === 'AbortError' || e.name === 'TimeoutError') return 'timeout';
    if (sent && e.code === 'ERR_INVALID_URL') return 'unreachable';
    if (BUGS.has(e.name) || BUG_CODE.test(e.code) || (i > 0 && BUG_CAUSES.has(e.message))) return null;
    if (TRANSPORT_CODES.has(e.code)) return TRANSPORT_CODES.get(e.code);
  }
  return 'unreachable';
}

// The calls waiting on each caller's signal: one 'abort' listener per signal however
// many calls share it, removed when the last settles (no crowd of listeners, and nothing
// left on a long-lived signal after any number of calls).
const waiting = new WeakMap();

/** Run `stop` when `signal` aborts; returns the function that forgets it. */
function onAbort(signal, stop) {
  let entry = waiting.get(signal);
  if (entry === undefined) {
    const stops = new Set();
    const listener = () => {
      waiting.delete(signal);
      for (const each of stops) each();
    };
    entry = { stops, listener };
    waiting.set(signal, entry);
    signal.addEventListener('abort', listener, { once: true });
  }
  entry.stops.add(stop);
  const mine = entry;
  return () => {
    mine.stops.delete(stop);
    if (mine.stops.size === 0 && waiting.get(signal) === mine) {
      waiting.delete(signal);
      signal.removeEventListener('abort', mine.listener);
    }
  };
}

/** `promise`, or the abort of `signal` if that comes first. */
function untilAborted(promise, signal) {
  if (!signal) return promise;
  return new Promise((resolve, reject) => {
    const stop = () => reject(signal.reason);
    const forget = onAbort(signal, stop);
    // Settled either way: a rejection that comes after the abort is handled here too.
    promise.then(resolve, reject).finally(forget);
    if (signal.aborted) stop();
  });
}

/** The audit record's adapter name and version: strings, or absent. */
function loadOptions(options) {
  const { adapter, version } = options == null ? {} : options;
  for (const [name, value] of [['adapter', adapter], ['version', version]]) {
    if (value !== undefined && typeof value !== 'string') {
      throw new TypeError(`options.${name} is a string (the audit record's adapter ${name}), not ${typeof value}`);
    }
  }
  return { adapter, version };
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
    const path = folder(dir);
    const { adapter, version } = loadOptions(options);
    try {
      return new Guard(native.NativeGuard.load(path, adapter, version));
    } catch (error) {
      rethrow(error);
    }
  }
  /** The contract's tool. */
  get tool() {
    return this._inner.tool;
  }
  /** The contract's byte limit: read at most `maxBytes + 1` bytes of a body. */
  get maxBytes() {
    return this._inner.maxBytes;
  }
  /** Whether this is an MCP tool contract (its admissions carry a `callToolResult`). */
  get isMcp() {
    return this._inner.isMcp;
  }
  /** The contract's retry policy: {maxAttempts, deadlineMs, retryable: [codes]}. */
  get retryPolicy() {
    const p = JSON.parse(this._inner.retryPolicyJson());
    return { maxAttempts: p.max_attempts, deadlineMs: p.deadline_ms, retryable: p.retryable };
  }
  /** Judge one raw response (a Buffer, any ArrayBuffer view, an ArrayBuffer or a string) for `request`. */
  admit(request, raw) {
    const bytes = body(raw);
    try {
      return new Admission(this._inner.admit(requestJson(request), bytes));
    } catch (error) {
      rethrow(error);
    }
  }
  /** `admit` off the event loop (the libuv thread pool): a Promise of the Admission. */
  async admitAsync(request, raw) {
    return this._admitAsync(request, body(raw), undefined);
  }
  async _admitAsync(request, bytes, attempt) {
    let task;
    try {
      task = this._inner.admitAsync(requestJson(request), bytes, attempt);
    } catch (error) {
      rethrow(error);
    }
    return new Admission(await task);
  }
  /** Judge a call that got no response: `kind` is "timeout", "connection_reset" or "unreachable". */
  admitTransportError(request, kind) {
    return this._admitTransportError(request, kind, undefined);
  }
  _admitTransportError(request, kind, attempt) {
    try {
      return new Admission(this._inner.admitTransportError(requestJson(request), String(kind), attempt));
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
   * `attempt(n)` returns (or resolves to) the raw body of try `n`, or throws. A thrown
   * error is a failed attempt of the transport error it stands for: its `transport`
   * property ("timeout", "connection_reset", "unreachable"), else what Node's own errors
   * say along their `cause` chain (fetch's `ECONNREFUSED`, `UND_ERR_SOCKET`, an
   * `AbortSignal.timeout`…), else "unreachable" (`transportOf`). The caller's bugs are
   * thrown again, not retried: what `attempt` returns that is not a body (TypeError), a
   * TypeError without a cause, Node's argument errors (an invalid URL, header, protocol),
   * a ReferenceError or SyntaxError, this package's own errors. `options.signal` (an
   * AbortSignal) cancels: the moment it is aborted `call` rejects with its reason, even
   * while an attempt runs (give the attempt the signal too, to stop its request), and no
   * attempt starts after. Every attempt's audit record carries its number (`attempt`).
   * Resolves to {admission, attempts} where admission is the last attempt's.
   */
  async call(request, attempt, options = {}) {
    if (typeof attempt !== 'function') {
      throw new TypeError('call(request, attempt): attempt is a function (n) => body');
    }
    const signal = options == null ? undefined : options.signal;
    if (signal !== undefined && !(signal instanceof AbortSignal || (signal !== null && typeof signal.aborted === 'boolean'
      && typeof signal.throwIfAborted === 'function' && typeof signal.addEventListener === 'function'
      && typeof signal.removeEventListener === 'function'))) {
      throw new TypeError('call(request, attempt, {signal}): signal is an AbortSignal');
    }
    const started = Date.now();
    const attempts = [];
    for (let n = 1; ; n += 1) {
      if (signal) signal.throwIfAborted();
      let raw;
      let threw = false;
      let failure;
      try {
        // An attempt that throws at once is a failed attempt too.
        raw = await untilAborted(Promise.resolve().then(() => attempt(n)), signal);
      } catch (error) {
        threw = true;
        failure = error;
      }
      // Cancelled while the attempt ran: the call ends with the cancellation.
      if (signal) signal.throwIfAborted();
      let admission;
      if (threw) {
        const kind = transportOf(failure);
        if (kind === null) throw failure;
        try {
          admission = this._admitTransportError(request, kind, n);
        } catch (error) {
          // A `transport` property that names no transport error: the thrown error is kept.
          if (error instanceof RoutingError && error.cause === undefined) error.cause = failure;
          throw error;
        }
      } else {
        admission = await this._admitAsync(request, body(raw), n);
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
  /** Throws ContractError when two guards are of one tool (which would serve it?). */
  constructor(guards) {
    this._byTool = new Map();
    for (const guard of guards) {
      if (this._byTool.has(guard.tool)) {
        throw new ContractError(`tool ${JSON.stringify(guard.tool)} is the tool of two contracts`);
      }
      this._byTool.set(guard.tool, guard);
    }
  }
  /** Throws ContractError naming the folder, as Python's `Guard.load_all` does. */
  static load(dirs, options = {}) {
    if (!Array.isArray(dirs)) throw new TypeError('Guards.load(dirs): dirs is an array of contract folders');
    const from = new Map();
    const guards = dirs.map((dir) => {
      const guard = Guard.load(dir, options);
      const first = from.get(guard.tool);
      if (first !== undefined) {
        throw new ContractError(`loading contract ${folder(dir)}: tool ${JSON.stringify(guard.tool)} is also the tool of ${first}`);
      }
      from.set(guard.tool, folder(dir));
      return guard;
    });
    return new Guards(guards);
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
    let tool;
    if (typeof request === 'string') {
      let parsed;
      try {
        parsed = JSON.parse(request);
      } catch (error) {
        throw new RequestError(`the request is not JSON: ${error.message}`);
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw new RequestError('a request is an object: {tool, request_id, params, now}');
      }
      tool = parsed.tool;
    } else if (request !== null && typeof request === 'object') {
      tool = request.tool;
    } else {
      throw new RequestError('a request is an object: {tool, request_id, params, now}');
    }
    const guard = this._byTool.get(tool);
    if (!guard) throw new RoutingError(`no contract for tool ${JSON.stringify(tool)}`);
    return guard;
  }
  admit(request, raw) {
    return this._route(request).admit(request, raw);
  }
  async admitAsync(request, raw) {
    return this._route(request).admitAsync(request, raw);
  }
}

module.exports = { Guard, Guards, Admission, AirlockError, ContractError, RequestError, RoutingError };
