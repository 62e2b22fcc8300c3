//! What Python gets back: `Admission` (the agent value, apart from the audit record and the
//! operator diagnostic), `CallOutcome` (every attempt of `Guard.call`) and `RetryPolicy`.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The judgement of one response. `agent` / `agent_json` are all the agent may be given;
/// `diagnostic` and `audit` are for the operator and may quote the response.
#[pyclass(frozen, module = "airlock_guard")]
#[derive(Debug)]
pub struct Admission {
    pub(crate) inner: airlock_guard::Admission,
    /// The contract is an MCP tool contract: the agent is given a `CallToolResult`.
    pub(crate) mcp: bool,
}

#[pymethods]
impl Admission {
    /// Whether the response was admitted: a success, or a valid failure envelope.
    #[getter]
    fn admitted(&self) -> bool {
        self.inner.is_admitted()
    }

    /// `"admitted"`, `"upstream_failure"`, `"transport_failure"` or `"rejected"`.
    #[getter]
    fn verdict(&self) -> String {
        serde_json::to_value(self.inner.audit().verdict())
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }

    /// The stage that decided: `"limits"`, `"parse"`, `"schema"`, …
    #[getter]
    fn stage(&self) -> &'static str {
        self.inner.audit().stage().as_str()
    }

    /// The agent value as JSON bytes: exactly `AgentValue::to_json_string` of the Rust guard.
    #[getter]
    fn agent_json<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.agent().to_json_string().as_bytes())
    }

    /// The agent value as a new dict (read from `agent_json`).
    #[getter]
    fn agent<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::json_loads(py, &self.inner.agent().to_json_string())
    }

    /// For an MCP tool contract, the `CallToolResult` the agent is given (JSON bytes), as
    /// `airlock admit` and `airlock mcp` print it; `None` for other contracts.
    #[getter]
    fn call_tool_result_json<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.mcp.then(|| {
            PyBytes::new(
                py,
                self.inner
                    .agent()
                    .to_call_tool_result()
                    .to_string()
                    .as_bytes(),
            )
        })
    }

    /// `call_tool_result_json` as a new dict; `None` for other contracts.
    #[getter]
    fn call_tool_result<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if !self.mcp {
            return Ok(None);
        }
        crate::json_loads(py, &self.inner.agent().to_call_tool_result().to_string()).map(Some)
    }

    /// The failure code the agent sees (`"INVALID_RESPONSE"`, `"NOT_FOUND"`, …), or `None`
    /// for a success.
    #[getter]
    fn failure_code(&self) -> Option<&'static str> {
        self.inner.agent().error().map(|(code, _)| code.as_str())
    }

    /// Whether the agent's failure is retryable (by the contract's policy); `None` for a
    /// success.
    #[getter]
    fn retryable(&self) -> Option<bool> {
        self.inner.agent().error().map(|(_, retryable)| retryable)
    }

    /// The operator diagnostic (may quote the response; never part of the agent value), with
    /// one `because …` line per cause; `None` when there is none.
    #[getter]
    fn diagnostic(&self) -> Option<String> {
        self.inner
            .diagnostic()
            .map(airlock_guard::Diagnostic::explained)
    }

    /// The diagnostic without the instance values it quotes (safe for shared logs). Its
    /// path still names members of the response: written as `printable`, as `diagnostic`.
    #[getter]
    fn diagnostic_masked(&self) -> Option<String> {
        self.inner
            .diagnostic()
            .map(|d| airlock_guard::printable(&d.masked().to_string()).into_owned())
    }

    /// The audit record as one JSON line (`AuditRecord::to_json_line`).
    #[getter]
    fn audit_json(&self) -> String {
        self.inner.audit().to_json_line()
    }

    /// The audit record as a new dict.
    #[getter]
    fn audit<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::json_loads(py, &self.inner.audit().to_json_line())
    }

    /// The attempt number under `Guard.call` (1-based); `None` for `Guard.admit`.
    #[getter]
    fn attempt(&self) -> Option<u32> {
        self.inner.audit().attempt()
    }

    /// No response text: tool, request id, verdict and code only.
    fn __repr__(&self) -> String {
        format!(
            "Admission(tool={:?}, request_id={:?}, verdict={:?}, failure_code={})",
            self.inner.agent().tool(),
            self.inner.agent().request_id(),
            self.verdict(),
            self.failure_code()
                .map_or_else(|| "None".to_owned(), |c| format!("{c:?}"))
        )
    }
}

/// The result of `Guard.call`: every attempt's admission and why the driver stopped.
#[pyclass(frozen, module = "airlock_guard")]
#[derive(Debug)]
pub struct CallOutcome {
    pub(crate) attempts: Vec<Py<Admission>>,
    pub(crate) stop_reason: &'static str,
}

#[pymethods]
impl CallOutcome {
    /// The last attempt's admission: what the agent is given.
    #[getter]
    fn admission(&self, py: Python<'_>) -> Py<Admission> {
        self.attempts
            .last()
            .expect("the driver always makes at least one attempt")
            .clone_ref(py)
    }

    /// Every attempt's admission, in order (each with its own audit record).
    #[getter]
    fn attempts(&self, py: Python<'_>) -> Vec<Py<Admission>> {
        self.attempts.iter().map(|a| a.clone_ref(py)).collect()
    }

    /// `"settled"`, `"not_retryable"`, `"attempts_exhausted"` or `"deadline_passed"`.
    #[getter]
    fn stop_reason(&self) -> &'static str {
        self.stop_reason
    }

    /// The asynchronous driver's outcome (`airlock_guard._aio`): `stop_reason` is one
    /// `Guard._stop_reason` gave, `attempts` not empty.
    #[staticmethod]
    fn _new(attempts: Vec<Py<Admission>>, stop_reason: &str) -> PyResult<Self> {
        let stop_reason = [
            "settled",
            "not_retryable",
            "attempts_exhausted",
            "deadline_passed",
            "other",
        ]
        .into_iter()
        .find(|r| *r == stop_reason)
        .ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!("no stop reason {stop_reason:?}"))
        })?;
        if attempts.is_empty() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "a call makes at least one attempt",
            ));
        }
        Ok(Self {
            attempts,
            stop_reason,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "CallOutcome(attempts={}, stop_reason={:?})",
            self.attempts.len(),
            self.stop_reason
        )
    }
}

/// The contract's retry policy (`[retry]` in contract.toml).
#[pyclass(frozen, module = "airlock_guard")]
#[derive(Debug)]
pub struct RetryPolicy {
    pub(crate) inner: airlock_guard::RetryPolicy,
}

#[pymethods]
impl RetryPolicy {
    /// At most this many calls.
    #[getter]
    fn max_attempts(&self) -> u32 {
        self.inner.max_attempts()
    }

    /// No attempt starts after this many seconds.
    #[getter]
    fn deadline(&self) -> f64 {
        self.inner.deadline().as_secs_f64()
    }

    /// The failure codes worth another attempt.
    #[getter]
    fn retryable(&self) -> Vec<&'static str> {
        self.inner.retryable().iter().map(|c| c.as_str()).collect()
    }

    /// Whether `code` is worth another attempt (a rejection never is).
    fn is_retryable(&self, code: &str) -> bool {
        airlock_guard::ErrorCode::from_wire(code).is_some_and(|c| self.inner.is_retryable(c))
    }

    fn __repr__(&self) -> String {
        format!(
            "RetryPolicy(max_attempts={}, deadline={}, retryable={:?})",
            self.max_attempts(),
            self.deadline(),
            self.retryable()
        )
    }
}
