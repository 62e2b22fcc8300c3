//! # airlock-guard
//!
//! The runtime boundary between untrusted tool output and an AI agent. An adapter calls
//! [`Guard::admit`] on every raw response; the guard runs, in order:
//!
//! 1. **limits** — at most `max_bytes` (a [`std::io::Read`] entry point reads one byte
//!    past the limit and stops);
//! 2. **parse** — strict RFC 8259: duplicate member names, depth, UTF-8, lone surrogates,
//!    BOM, trailing bytes, comments, NaN and out-of-range numbers are rejections.
//!    For an MCP tool contract (`[input] kind = "mcp"`, [`InputKind::Mcp`]) a **decode**
//!    step follows: the JSON-RPC response shape (closed), its `id` bound to the call,
//!    `isError` and JSON-RPC errors as failures, text blocks agreeing with
//!    `structuredContent`, which the later stages then judge. A vendor contract
//!    ([`InputKind::Vendor`]) judges the vendor's document by its own schema and maps
//!    declared members into `data`; a command-output contract ([`InputKind::Lines`]) reads
//!    text under a strict line grammar: the guard then builds the envelope itself;
//! 3. **schema** — JSON Schema (Draft 2020-12, 2019-09 or draft-07) with `format`
//!    asserted;
//! 4. **binding** — `request_id` and the contract's parameter checks;
//! 5. **checks** — `fresh` and custom [`CustomCheck`]s, with time from the request;
//! 6. **projection** — a new [`AgentValue`] holding only the contract's agent fields;
//! 7. **audit** — an [`AuditRecord`] with the operator [`Diagnostic`].
//!
//! The agent gets an [`AgentValue`]: the projected success, the failure code of a valid
//! failure envelope, `UPSTREAM_UNAVAILABLE` for a transport failure, or the fixed
//! `INVALID_RESPONSE` failure. It is never built from rejected bytes or validator text.
//! An MCP host is given [`AgentValue::to_call_tool_result`]: a fresh `CallToolResult`.
//!
//! ```
//! use airlock_guard::{Contract, Guard, Request, TransportError};
//!
//! let guard = Guard::builder(Contract::load("../schemas/job_run_status")?)
//!     .adapter("ci-connector", "1.4.0")
//!     .endpoint("https://ci.internal/api/runs")
//!     .build();
//! let request = Request::from_json(br#"{"request_id":"req.Bx81LmQa",
//!     "params":{"project_id":"bluebird","run_ids":["run_8fK2mQ7xLp0Z"]},
//!     "now":"2026-12-02T10:00:00Z"}"#)?;
//!
//! // Each attempt is judged afresh; transport failures are retried by the policy.
//! let outcome = guard.call(&request, |attempt| match attempt {
//!     1 => Err(TransportError::Timeout),
//!     _ => Ok(br#"{"tool":"job_run_status","request_id":"req.Bx81LmQa","outcome":"success",
//!       "data":{"project_id":"bluebird","run_id":"run_8fK2mQ7xLp0Z","state":"failed",
//!       "observed_at":"2026-12-02T09:58:00Z"}}"#.to_vec()),
//! });
//! let admission = outcome.final_admission();
//! assert!(admission.is_admitted());
//! assert_eq!(outcome.attempts().len(), 2);
//! assert_eq!(admission.agent().data().unwrap()["state"], "failed");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod audit;
mod binding;
mod checks;
mod contract;
mod doc;
mod guard;
mod input;
mod limits;
mod mcp;
mod names;
mod parse;
mod pointer;
mod projection;
mod request;
mod resources;
mod retry;
mod schema;
mod upstream;

pub use audit::{
    sha256_hex, AdapterInfo, AuditRecord, Diagnostic, Masked, Sha256Digest, Stage, Verdict,
};
pub use checks::{parse_duration, CheckFailure, CheckSpec, CustomCheck, DurationError};
pub use contract::{
    load_schema_file, read_contract_file, schema_version, version_file, Contract, ContractBuilder,
    ContractError, LintAllowance, MANIFEST,
};
pub use guard::{Admission, Guard, GuardBuilder, RetryOutcome};
pub use input::{InputKind, MAX_LINE_BYTES_CEILING};
pub use limits::{
    read_limited, Limits, ReadError, MAX_BYTES_CEILING, MAX_CONTRACT_FILE_BYTES, MAX_DEPTH_CEILING,
};
pub use mcp::{ContentKind, McpInput, TextRule, STRUCTURED_CONTENT};
pub use names::is_tool_name;
pub use parse::{parse, parse_within, ParseError, ParseErrorKind};
pub use pointer::{Pointer, PointerError};
pub use projection::{AgentValue, ErrorCode, Fields};
pub use request::Request;
pub use resources::Resources;
pub use retry::{RetryPolicy, StopReason, TransportError};
pub use schema::{
    in_place_ref_cycle, in_place_ref_cycle_across, CompiledSchema, Dialect, SchemaError,
    SchemaOptions, DRAFT_07, DRAFT_2019_09, DRAFT_2020_12, MAX_EXPLAINED_BYTES, MAX_IN_PLACE,
    MAX_IN_PLACE_DEPTH, MAX_PATTERN_POSITIONS, MAX_REFERENCES,
};
pub use upstream::{
    invisible, printable, visible, FailureRule, LineEnding, LinesInput, Mapping, Normalise,
    VendorInput,
};

/// Re-exported so custom checks can name times and durations without a direct dependency.
pub use jiff;
