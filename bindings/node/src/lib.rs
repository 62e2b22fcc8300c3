//! The Airlock guard for Node.js: a napi-rs addon over `airlock-guard`.
//!
//! The native surface is small and string-typed on purpose: a request goes in as its JSON
//! text (the exec protocol's `request` object), a body as a `Buffer`, and what comes out
//! is JSON text the JavaScript wrapper (`index.js`) parses. So the agent's value is built
//! by the same code, to the same bytes, as in Rust (`AgentValue::to_json_string`): there
//! is no second serialiser to drift. Errors carry a fixed tag (`[contract]`, `[request]`,
//! `[transport]`) that the wrapper turns into its typed exceptions.

use airlock_guard::{Admission, Contract, Diagnostic, Guard, Request, TransportError};
use napi::bindgen_prelude::{AsyncTask, Buffer, BufferSlice, External, ExternalRef};
use napi::{Env, Error, Result, Status, Task};
use napi_derive::napi;
use std::sync::Arc;

fn tagged(tag: &str, message: impl std::fmt::Display) -> Error {
    Error::new(Status::InvalidArg, format!("[{tag}] {message}"))
}

fn request(json: &str) -> Result<Request> {
    Request::from_json(json.as_bytes()).map_err(|e| tagged("request", e))
}

/// What one judgement gave: the admission and the guard that made it. JavaScript holds it
/// as an external value (cheaper to make than a class instance, which costs a constructor
/// call and a wrap per admission) and reads it through the functions below; only what it
/// asks for becomes a JavaScript value (the audit line and the diagnostic are built on
/// demand).
#[derive(Debug)]
pub struct Judged {
    guard: Arc<Guard>,
    admission: Admission,
}

/// Whether the response was admitted (a success or a valid failure envelope).
#[napi]
pub fn admitted(judged: &External<Judged>) -> bool {
    judged.admission.is_admitted()
}

/// The agent's value: the exact JSON text the Rust guard gives.
#[napi]
pub fn agent_json(judged: &External<Judged>) -> String {
    judged.admission.agent().to_json_string()
}

/// For an MCP contract, the agent's value as a fresh `CallToolResult` (JSON text).
#[napi]
pub fn call_tool_result_json(judged: &External<Judged>) -> Option<String> {
    let mcp = judged.guard.contract().input().mcp();
    mcp.map(|_| judged.admission.agent().to_call_tool_result().to_string())
}

/// The failure code the agent sees, when the value is a failure.
#[napi]
pub fn failure_code(judged: &External<Judged>) -> Option<String> {
    let error = judged.admission.agent().error();
    error.map(|(code, _)| code.as_str().to_owned())
}

/// Whether that failure is retryable.
#[napi]
pub fn retryable(judged: &External<Judged>) -> Option<bool> {
    judged
        .admission
        .agent()
        .error()
        .map(|(_, retryable)| retryable)
}

/// The operator's diagnostic (never part of the agent value), with its causes.
#[napi]
pub fn diagnostic(judged: &External<Judged>) -> Option<String> {
    judged.admission.diagnostic().map(Diagnostic::explained)
}

/// The audit record, one JSON line.
#[napi]
pub fn audit_json(judged: &External<Judged>) -> String {
    judged.admission.audit().to_json_line()
}

fn judged(guard: &Arc<Guard>, admission: Admission) -> External<Judged> {
    External::new(Judged {
        guard: Arc::clone(guard),
        admission,
    })
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
        let contract = Contract::load(&dir).map_err(|e| tagged("contract", e))?;
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
    /// text.
    #[napi(ts_return_type = "ExternalObject<Judged>")]
    pub fn admit(&self, request_json: String, body: BufferSlice) -> Result<External<Judged>> {
        let request = request(&request_json)?;
        Ok(judged(&self.inner, self.inner.admit(&request, &body)))
    }

    /// `admit` on the libuv thread pool: the event loop goes on while the guard judges.
    #[napi(ts_return_type = "Promise<ExternalObject<Judged>>")]
    pub fn admit_async(&self, request_json: String, body: Buffer) -> Result<AsyncTask<Judge>> {
        Ok(AsyncTask::new(Judge {
            guard: Arc::clone(&self.inner),
            request: request(&request_json)?,
            body: body.to_vec(),
        }))
    }

    /// Judge a call that got no response: `kind` is `timeout`, `connection_reset` or
    /// `unreachable` (the exec protocol's `transport_error` values).
    #[napi]
    pub fn admit_transport_error(
        &self,
        request_json: String,
        kind: String,
    ) -> Result<External<Judged>> {
        let request = request(&request_json)?;
        let error = TransportError::from_wire(&kind)
            .ok_or_else(|| tagged("transport", format!("unknown transport error {kind:?}")))?;
        Ok(judged(
            &self.inner,
            self.inner.admit_transport_error(&request, error),
        ))
    }
}

/// The work of `admitAsync`, off the JavaScript thread.
#[derive(Debug)]
pub struct Judge {
    guard: Arc<Guard>,
    request: Request,
    body: Vec<u8>,
}

impl Task for Judge {
    type Output = Admission;
    type JsValue = ExternalRef<Judged>;

    fn compute(&mut self) -> Result<Admission> {
        Ok(self.guard.admit(&self.request, &self.body))
    }

    fn resolve(&mut self, env: Env, admission: Admission) -> Result<ExternalRef<Judged>> {
        let judged = Judged {
            guard: Arc::clone(&self.guard),
            admission,
        };
        ExternalRef::new(&env, judged)
    }
}
