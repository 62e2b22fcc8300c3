// Types of the Airlock guard for Node.js (index.js).

/** The exec protocol's request: what the call asked for, and when. */
export interface Request {
  /** The contract's tool (routes a request among several guards). */
  tool?: string;
  /** The request id the response must echo (envelope contracts). */
  request_id?: string;
  /** The JSON-RPC id of an MCP `tools/call` (MCP contracts). */
  jsonrpc_id?: string | number;
  /** The call's parameters, for binding checks. */
  params?: Record<string, unknown>;
  /** When the call was made: RFC 3339 text or a Date. */
  now: string | Date;
}

/**
 * A response body: the raw bytes as they came (any ArrayBuffer view, or an ArrayBuffer
 * such as `fetch`'s `arrayBuffer()` gives), or text (a lone surrogate in it is refused).
 */
export type Body = Buffer | ArrayBufferView | ArrayBuffer | string;

/** The failure codes of the fixed failure value. */
export type FailureCode = 'INVALID_RESPONSE' | 'UPSTREAM_UNAVAILABLE' | 'OUTCOME_UNVERIFIED' | 'TOOL_ERROR' | string;

/** What the guard decided for one response. */
export declare class Admission {
  /** Whether the response was admitted (a success or a valid failure envelope). */
  readonly admitted: boolean;
  /** The agent's value as the exact JSON text the Rust guard gives. */
  readonly agentJson: string;
  /** The failure code the agent sees, or null for a success. */
  readonly failureCode: FailureCode | null;
  /** Whether that failure is retryable, or null for a success. */
  readonly retryable: boolean | null;
  /** The operator's diagnostic: never part of the agent's value. Log it, do not forward it. */
  readonly diagnostic: string | null;
  /** The diagnostic's line without the input values it quotes (for logs others read), or null. */
  readonly diagnosticMasked: string | null;
  /** The audit record as one JSON line. */
  readonly auditJson: string;
  /** The agent's value: the projected success or the fixed failure, nothing else. */
  get agent(): Record<string, unknown>;
  /** For an MCP contract: the agent's value as a fresh CallToolResult, else null. */
  get callToolResult(): Record<string, unknown> | null;
  /** The audit record (tool, contract_version, stage, verdict, digests, diagnostic, …). */
  get audit(): Record<string, unknown>;
  /** `JSON.stringify(admission)`: the agent's value, never the diagnostic. */
  toJSON(): Record<string, unknown>;
}

export interface RetryPolicy {
  maxAttempts: number;
  deadlineMs: number;
  retryable: FailureCode[];
}

export interface GuardOptions {
  /** The adapter's name, written in the audit record. */
  adapter?: string;
  /** The adapter's version, written in the audit record. */
  version?: string;
}

/** One contract's guard. */
export declare class Guard {
  /** Load a contract folder; throws ContractError naming the file. */
  static load(dir: string | URL, options?: GuardOptions): Guard;
  readonly tool: string;
  /** The contract's byte limit: read at most `maxBytes + 1` bytes of a body. */
  readonly maxBytes: number;
  /** Whether this is an MCP tool contract (its admissions carry a `callToolResult`). */
  readonly isMcp: boolean;
  readonly retryPolicy: RetryPolicy;
  /** Judge one raw response for `request` (on the calling thread). */
  admit(request: Request | string, body: Body): Admission;
  /** `admit` on the libuv thread pool: the event loop goes on meanwhile. */
  admitAsync(request: Request | string, body: Body): Promise<Admission>;
  /** Judge a call that got no response. */
  admitTransportError(request: Request | string, kind: 'timeout' | 'connection_reset' | 'unreachable'): Admission;
  /** Whether to try again after the `attempt`-th admission, `elapsedMs` into the call. */
  shouldRetry(admission: Admission, attempt: number, elapsedMs?: number): boolean;
  /**
   * Call an upstream under the contract's retry policy. `attempt(n)` gives try n's raw
   * body or throws: a failed attempt of the transport error the error's `transport`
   * property names, else the one Node's error codes along its `cause` chain name (fetch's
   * ECONNREFUSED, UND_ERR_SOCKET, an AbortSignal.timeout…), else "unreachable". The
   * caller's bugs are thrown again after one attempt: a TypeError without a cause, Node's
   * argument errors (an invalid URL, header, protocol), a ReferenceError or SyntaxError,
   * this package's errors. `options.signal` cancels: the moment it is aborted the call
   * rejects with its reason, even while an attempt runs. Each attempt's audit record
   * carries its number.
   */
  call(
    request: Request | string,
    attempt: (n: number) => Body | Promise<Body>,
    options?: { signal?: AbortSignal },
  ): Promise<{ admission: Admission; attempts: Admission[] }>;
}

/** Several contracts, each request routed by its `tool`. */
export declare class Guards {
  /** Load each folder; throws ContractError naming the file, or both folders of one tool. */
  static load(dirs: (string | URL)[], options?: GuardOptions): Guards;
  readonly tools: string[];
  get(tool: string): Guard | undefined;
  admit(request: Request | string, body: Body): Admission;
  admitAsync(request: Request | string, body: Body): Promise<Admission>;
}

export declare class AirlockError extends Error {}
/** A contract folder that cannot be loaded (the message names the file and why). */
export declare class ContractError extends AirlockError {}
/** A request that is not the exec protocol's request object. */
export declare class RequestError extends AirlockError {}
/** No contract for a request's tool, or an unknown transport error. */
export declare class RoutingError extends AirlockError {}
