//! The Airlock guard for Node.js: a napi-rs addon over `airlock-guard`.
//!
//! The native surface is small and string-typed on purpose: a request goes in as its JSON
//! text (the exec protocol's `request` object), a body as a `Buffer`, and what comes out
//! is JSON text the JavaScript wrapper (`index.js`) parses. So the agent's value is built
//! by the same code, to the same bytes, as in Rust (`AgentValue::to_json_string`): there
//! is no second serialiser to drift. Errors carry a fixed tag (`[contract]`, `[request]`,
//! `[transport]`) that the wrapper turns into its typed exceptions.

use airlock_guard::{Admission, Contract, Guard, Request, TransportError};
use napi::bindgen_prelude::{AsyncTask, Buffer};
use napi::{Env, Error, Result, Status, Task};
use napi_derive::napi;
use std::sync::Arc;

fn tagged(tag: &str, message: impl std::fmt::Display) -> Error {
    Error::new(Status::InvalidArg, format!("[{tag}] {message}"))
}

fn request(json: &str) -> Result<Request> {
    Request::from_json(json.as_bytes()).map_err(|e| tagged("request", e))
}

/// What one judgement gave, read by the wrapper through getters: only what JavaScript
/// asks for is turned into JavaScript values (the audit line and the diagnostic are built
/// on demand).
#[napi]
#[derive(Debug)]
pub struct NativeAdmission {
    guard: Arc<Guard>,
    admission: Admission,
}

#[napi]
impl NativeAdmission {
    /// Whether the response was admitted (a success or a valid failure envelope).
    #[napi(getter)]
    pub fn admitted(&self) -> bool {
        self.admission.is_admitted()
    }

    /// The agent's value: the exact JSON text the Rust guard gives.
    #[napi(getter)]
    pub fn agent_json(&self) -> String {
        self.admission.agent().to_json_string()
    }

    /// For an MCP contract, the agent's value as a fresh `CallToolResult` (JSON text).
    #[napi(getter)]
    pub fn call_tool_result_json(&self) -> Option<String> {
        let mcp = self.guard.contract().input().mcp();
        mcp.map(|_| self.admission.agent().to_call_tool_result().to_string())
    }

    /// The failure code the agent sees, when the value is a failure.
    #[napi(getter)]
    pub fn failure_code(&self) -> Option<String> {
        let error = self.admission.agent().error();
        error.map(|(code, _)| code.as_str().to_owned())
    }

    /// Whether that failure is retryable.
    #[napi(getter)]
    pub fn retryable(&self) -> Option<bool> {
        self.admission
            .agent()
            .error()
            .map(|(_, retryable)| retryable)
    }

    /// The operator's diagnostic (never part of the agent value), with its causes.
    #[napi(getter)]
    pub fn diagnostic(&self) -> Option<String> {
        self.admission.diagnostic().map(|d| {
            let mut text = d.to_string();
            for cause in d.causes() {
                text.push_str("\n  because ");
                text.push_str(&cause.to_string());
            }
            text
        })
    }

    /// The audit record, one JSON line.
    #[napi(getter)]
    pub fn audit_json(&self) -> String {
        self.admission.audit().to_json_line()
    }
}

fn native(guard: &Arc<Guard>, admission: Admission) -> NativeAdmission {
    NativeAdmission {
        guard: Arc::clone(guard),
        admission,
    }
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

    /// Judge `body` (the raw response bytes) for the request given as JSON text.
    #[napi]
    pub fn admit(&self, request_json: String, body: Buffer) -> Result<NativeAdmission> {
        let request = request(&request_json)?;
        Ok(native(&self.inner, self.inner.admit(&request, &body)))
    }

    /// `admit` on the libuv thread pool: the event loop goes on while the guard judges.
    #[napi(ts_return_type = "Promise<NativeAdmission>")]
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
    ) -> Result<NativeAdmission> {
        let request = request(&request_json)?;
        let error = TransportError::from_wire(&kind)
            .ok_or_else(|| tagged("transport", format!("unknown transport error {kind:?}")))?;
        Ok(native(
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
    type Output = NativeAdmission;
    type JsValue = NativeAdmission;

    fn compute(&mut self) -> Result<NativeAdmission> {
        let admission = self.guard.admit(&self.request, &self.body);
        Ok(native(&self.guard, admission))
    }

    fn resolve(&mut self, _env: Env, output: NativeAdmission) -> Result<NativeAdmission> {
        Ok(output)
    }
}
