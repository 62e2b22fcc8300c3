//! The Airlock guard for Node.js: a napi-rs addon over `airlock-guard`.
//!
//! The native surface is small and string-typed on purpose: a request goes in as its JSON
//! text (the exec protocol's `request` object), a body as a `Buffer`, and what comes out
//! is one string per judgement (`packed`) holding the JSON text the JavaScript wrapper
//! (`index.js`) parses. So the agent's value is built by the same code, to the same bytes,
//! as in Rust (`AgentValue::to_json_string`): there is no second serialiser to drift. Errors carry a fixed tag (`[contract]`, `[request]`,
//! `[transport]`) that the wrapper turns into its typed exceptions.

use airlock_guard::{Admission, Contract, Diagnostic, Guard, Request, TransportError};
use napi::bindgen_prelude::{AsyncTask, BufferSlice};
use napi::{Env, Error, Result, Status, Task};
use napi_derive::napi;
use std::sync::Arc;

fn tagged(tag: &str, message: impl std::fmt::Display) -> Error {
    Error::new(Status::InvalidArg, format!("[{tag}] {message}"))
}

fn request(json: &str) -> Result<Request> {
    Request::from_json(json.as_bytes()).map_err(|e| tagged("request", e))
}

/// One judgement as the JavaScript wrapper reads it: a single string, which the V8 heap
/// owns. An addon's native memory is freed by finalizers that Node runs only between turns
/// of the event loop, so a handle per admission would let a long synchronous loop of
/// `admit` calls hold all their admissions at once (about 1 KB each); a string is
/// collected like any other. The parts are separated by NUL, which JSON text never holds
/// unescaped, nor the diagnostics (`printable` escapes every control character they
/// quote); the reader splits at the first five NULs only all the same:
///
/// * the head: `A` (admitted) or `R`; `r`, `n` or `-` (a retryable failure, a failure
///   that is not, a success); `d` or `-` (a diagnostic follows); `c` or `-` (a
///   `CallToolResult` follows); then the failure code, if any;
/// * the agent's value, the exact JSON text the Rust guard gives;
/// * the audit record, one JSON line;
/// * for an MCP contract, the agent's value as a fresh `CallToolResult` (JSON text);
/// * the operator's diagnostic (never part of the agent value) with its causes;
/// * the same without the input values it quotes (its one line), for shared logs.
fn packed(guard: &Guard, admission: &Admission) -> String {
    let agent = admission.agent();
    let error = agent.error();
    let diagnostic = admission.diagnostic().map(Diagnostic::explained);
    let masked = admission
        .diagnostic()
        .map(|d| airlock_guard::printable(&d.masked().to_string()).into_owned());
    let result = guard
        .contract()
        .input()
        .mcp()
        .map(|_| agent.to_call_tool_result().to_string());
    let agent = agent.to_json_string();
    let audit = admission.audit().to_json_line();
    let mut out = String::with_capacity(
        32 + agent.len()
            + audit.len()
            + result.as_ref().map_or(0, String::len)
            + diagnostic.as_ref().map_or(0, String::len)
            + masked.as_ref().map_or(0, String::len),
    );
    out.push(if admission.is_admitted() { 'A' } else { 'R' });
    out.push(match error {
        Some((_, true)) => 'r',
        Some((_, false)) => 'n',
        None => '-',
    });
    out.push(if diagnostic.is_some() { 'd' } else { '-' });
    out.push(if result.is_some() { 'c' } else { '-' });
    if let Some((code, _)) = error {
        out.push_str(code.as_str());
    }
    for part in [Some(agent), Some(audit), result, diagnostic, masked] {
        out.push('\0');
        out.push_str(part.as_deref().unwrap_or_default());
    }
    out
}

/// One contract's guard.
#[napi]
#[derive(Debug)]
pub struct NativeGuard {
    inner: Arc<Guard>,
}

#[napi]
impl NativeGuard {
    /// Load the contract folder `dir` (`contract.toml` and its schema files).
    #[napi(factory)]
    pub fn load(dir: String, adapter: Option<String>, version: Option<String>) -> Result<Self> {
        // As the Python binding and the command line say it: the folder, then the file.
        let contract = Contract::load(&dir)
            .map_err(|e| tagged("contract", format!("loading contract {dir}: {e}")))?;
        let mut builder = Guard::builder(contract);
        if let Some(name) = adapter {
            builder = builder.adapter(name, version.unwrap_or_default());
        }
        Ok(Self {
            inner: Arc::new(builder.build()),
        })
    }

    /// The contract's tool.
    #[napi(getter)]
    pub fn tool(&self) -> String {
        self.inner.contract().tool().to_owned()
    }

    /// The contract's byte limit: read at most `max_bytes + 1` bytes of a body (one more
    /// already makes it too large). At most `MAX_BYTES_CEILING` (64 MiB): a u32.
    #[napi(getter)]
    pub fn max_bytes(&self) -> u32 {
        u32::try_from(self.inner.contract().limits().max_bytes).unwrap_or(u32::MAX)
    }

    /// Whether the contract is an MCP tool contract (`[input] kind = "mcp"`): its
    /// admissions carry a `CallToolResult`.
    #[napi(getter)]
    pub fn is_mcp(&self) -> bool {
        self.inner.contract().input().mcp().is_some()
    }

    /// The contract's retry policy: `{"max_attempts", "deadline_ms", "retryable"}`.
    #[napi]
    pub fn retry_policy_json(&self) -> String {
        let policy = self.inner.contract().retry();
        let retryable: Vec<&str> = policy.retryable().iter().map(|c| c.as_str()).collect();
        format!(
            "{{\"max_attempts\":{},\"deadline_ms\":{},\"retryable\":[{}]}}",
            policy.max_attempts(),
            policy.deadline().as_millis(),
            retryable
                .iter()
                .map(|c| format!("\"{c}\""))
                .collect::<Vec<_>>()
                .join(",")
        )
    }

    /// Judge `body` (the raw response bytes, read in place) for the request given as JSON
    /// text: the judgement as `packed` writes it.
    #[napi]
    pub fn admit(&self, request_json: String, body: BufferSlice) -> Result<String> {
        let request = request(&request_json)?;
        Ok(packed(&self.inner, &self.inner.admit(&request, &body)))
    }

    /// `admit` on the libuv thread pool: the event loop goes on while the guard judges.
    /// The body is copied for the pool's thread, but only as much of it as the guard reads
    /// (`max_bytes` and one byte more, which already makes it too large): a 200 MB body
    /// costs the event loop a 4 KB copy, not 200 MB. `attempt` numbers the audit record
    /// (the wrapper's retry driver).
    #[napi]
    pub fn admit_async(
        &self,
        request_json: String,
        body: BufferSlice,
        attempt: Option<u32>,
    ) -> Result<AsyncTask<Judge>> {
        let read = usize::try_from(self.inner.contract().limits().max_bytes.saturating_add(1))
            .unwrap_or(usize::MAX)
            .min(body.len());
        Ok(AsyncTask::new(Judge {
            guard: Arc::clone(&self.inner),
            request: request(&request_json)?,
            body: body[..read].to_vec(),
            attempt,
        }))
    }

    /// Judge a call that got no response: `kind` is `timeout`, `connection_reset` or
    /// `unreachable` (the exec protocol's `transport_error` values); `attempt` as for
    /// `admit_async`.
    #[napi]
    pub fn admit_transport_error(
        &self,
        request_json: String,
        kind: String,
        attempt: Option<u32>,
    ) -> Result<String> {
        let request = request(&request_json)?;
        let error = TransportError::from_wire(&kind)
            .ok_or_else(|| tagged("transport", format!("unknown transport error {kind:?}")))?;
        let mut admission = self.inner.admit_transport_error(&request, error);
        if let Some(attempt) = attempt {
            admission.set_attempt(attempt);
        }
        Ok(packed(&self.inner, &admission))
    }
}

/// The work of `admitAsync`, off the JavaScript thread.
#[derive(Debug)]
pub struct Judge {
    guard: Arc<Guard>,
    request: Request,
    body: Vec<u8>,
    attempt: Option<u32>,
}

impl Task for Judge {
    type Output = String;
    type JsValue = String;

    /// The judgement and its text, both off the JavaScript thread.
    fn compute(&mut self) -> Result<String> {
        let mut admission = self.guard.admit(&self.request, &self.body);
        if let Some(attempt) = self.attempt {
            admission.set_attempt(attempt);
        }
        Ok(packed(&self.guard, &admission))
    }

    fn resolve(&mut self, _env: Env, packed: String) -> Result<String> {
        Ok(packed)
    }
}
