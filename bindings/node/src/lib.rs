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

/// What one judgement gives, as the wrapper reads it.
#[napi(object)]
#[derive(Debug)]
pub struct NativeAdmission {
    /// Whether the response was admitted (a success or a valid failure envelope).
    pub admitted: bool,
    /// The agent's value: the exact JSON text the Rust guard gives.
    pub agent_json: String,
    /// For an MCP contract, the agent's value as a fresh `CallToolResult` (JSON text).
    pub call_tool_result_json: Option<String>,
    /// The failure code the agent sees, when the value is a failure.
    pub failure_code: Option<String>,
    /// Whether that failure is retryable.
    pub retryable: Option<bool>,
    /// The operator's diagnostic (never part of the agent value), with its causes.
    pub diagnostic: Option<String>,
    /// The audit record, one JSON line.
    pub audit_json: String,
}

fn native(guard: &Guard, admission: &Admission) -> NativeAdmission {
    let agent = admission.agent();
    let error = agent.error();
    let diagnostic = admission.diagnostic().map(|d| {
        let mut text = d.to_string();
        for cause in d.causes() {
            text.push_str("\n  because ");
            text.push_str(&cause.to_string());
        }
        text
    });
    NativeAdmission {
        admitted: admission.is_admitted(),
        agent_json: agent.to_json_string(),
        call_tool_result_json: guard
            .contract()
            .input()
            .mcp()
            .map(|_| agent.to_call_tool_result().to_string()),
        failure_code: error.map(|(code, _)| code.as_str().to_owned()),
        retryable: error.map(|(_, retryable)| retryable),
        diagnostic,
        audit_json: admission.audit().to_json_line(),
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
        Ok(native(&self.inner, &self.inner.admit(&request, &body)))
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

    /// Judge a call that got no response: `kind` is `timeout`, `connection_refused`, … (the
    /// exec protocol's `transport_error` values).
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
            &self.inner.admit_transport_error(&request, error),
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
        Ok(native(&self.guard, &admission))
    }

    fn resolve(&mut self, _env: Env, output: NativeAdmission) -> Result<NativeAdmission> {
        Ok(output)
    }
}
