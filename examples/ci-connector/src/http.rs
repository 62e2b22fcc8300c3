//! The HTTP adapter: a CI server's pipeline document, judged by a vendor contract.

use airlock_guard::{Admission, Request, TransportError};
use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use crate::{ConnectorError, Judge};

/// The per-attempt timeout when none is set: connect, send, headers and the whole body.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3);

/// GitLab's pipeline API behind the `ci_pipeline_status` contract (or any vendor contract
/// whose request has `project_id` and `pipeline_id`).
///
/// What an HTTP answer means (the status is a claim of the server, the body is judged):
///
/// | answer | what the agent gets |
/// |---|---|
/// | `Content-Type` not `application/json` (any status) | the body is **not read**: a transport failure (`unreachable`: something other than the API answered, a proxy's or login page), `UPSTREAM_UNAVAILABLE`, retried as the policy says |
/// | 2xx, JSON | the body judged by the contract |
/// | 404, 5xx or any other status, JSON | the body judged too: GitLab's `{"message": "404 Not Found"}` becomes `NOT_FOUND` and any other `message` `UPSTREAM_UNAVAILABLE` by the contract's failure rules; anything else the contract rejects is the fixed failure |
/// | a non-2xx status whose body the contract would admit as a **success** | a transport failure (`unreachable`): a server that says it failed is not believed when it sends a pipeline |
/// | a body over `max_bytes` | reading stops at `max_bytes + 1` bytes; rejected (`limits`) |
/// | a connection refused, a name not found | `unreachable` |
/// | no complete answer within the per-attempt timeout (a slow body included) | `timeout` |
/// | the connection closed mid-body (`Content-Length` or chunks unfinished) | `connection_reset` |
///
/// Redirects are not followed (a 3xx is judged as any other non-2xx: its body, if JSON).
pub struct CiConnector {
    base_url: String,
    judge: Judge,
    http: ureq::Agent,
}

impl std::fmt::Debug for CiConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CiConnector")
            .field("base_url", &self.base_url)
            .field("judge", &self.judge)
            .finish_non_exhaustive()
    }
}

impl CiConnector {
    /// A connector for the API at `base_url` (e.g. `https://gitlab.example/api/v4`; this
    /// crate is built without TLS: enable ureq's `rustls` feature for https) judged by the
    /// contract in `contract_dir`. Audit records are discarded until
    /// [`CiConnector::audit_to`] names a writer.
    ///
    /// # Errors
    ///
    /// [`ConnectorError::Contract`] when the contract does not load.
    pub fn new(base_url: &str, contract_dir: impl AsRef<Path>) -> Result<Self, ConnectorError> {
        let base_url = base_url.trim_end_matches('/').to_owned();
        let judge = Judge::load(contract_dir.as_ref(), Some(&base_url), Box::new(io::sink()))?;
        Ok(Self {
            base_url,
            judge,
            http: agent(DEFAULT_TIMEOUT),
        })
    }

    /// Write one audit record (a JSON line) per attempt to `audit`.
    pub fn audit_to(mut self, audit: impl Write + Send + 'static) -> Self {
        self.judge.audit = std::sync::Mutex::new(Box::new(audit));
        self
    }

    /// Give each attempt at most `timeout`, from connecting to the body's last byte.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.http = agent(timeout);
        self
    }

    /// The judge (the guard and the audit writer).
    pub fn judge(&self) -> &Judge {
        &self.judge
    }

    /// The URL asked for `request`: `{base}/projects/{project_id}/pipelines/{pipeline_id}`.
    ///
    /// # Errors
    ///
    /// [`ConnectorError::BadRequest`] unless both parameters are positive integers.
    pub fn url(&self, request: &Request) -> Result<String, ConnectorError> {
        let id = |name: &str| {
            request
                .params
                .get(name)
                .and_then(serde_json::Value::as_u64)
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    ConnectorError::BadRequest(format!(
                        "parameter {name:?} must be a positive integer"
                    ))
                })
        };
        Ok(format!(
            "{}/projects/{}/pipelines/{}",
            self.base_url,
            id("project_id")?,
            id("pipeline_id")?
        ))
    }

    /// Ask the upstream for the pipeline `request` names and judge the answer: the value
    /// for the agent is `admission.agent()` (`to_json()` for the closed envelope).
    ///
    /// # Errors
    ///
    /// A bad request (nothing sent) or an audit record that could not be written.
    pub fn fetch(&self, request: &Request) -> Result<Admission, ConnectorError> {
        let url = self.url(request)?;
        self.judge
            .run(request, |_attempt| self.attempt(&url, request))
    }

    /// One GET: the body under the limit, or the transport error it amounts to.
    fn attempt(&self, url: &str, request: &Request) -> Result<Vec<u8>, TransportError> {
        let mut response = self
            .http
            .get(url)
            .header("Accept", "application/json")
            .call()
            .map_err(|e| transport_of(&e))?;
        if !is_json(response.headers().get("content-type")) {
            // Not read: whatever answered is not the API the contract describes.
            return Err(TransportError::Unreachable);
        }
        let status = response.status();
        let body = self
            .judge
            .read_body(response.body_mut().as_reader(), transport_of_io)?;
        if !status.is_success()
            && self
                .judge
                .guard()
                .admit(request, &body)
                .agent()
                .error()
                .is_none()
        {
            return Err(TransportError::Unreachable);
        }
        Ok(body)
    }
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(concat!(
            env!("CARGO_PKG_NAME"),
            "/",
            env!("CARGO_PKG_VERSION")
        ))
        .build()
        .new_agent()
}

/// `application/json`, parameters (`; charset=utf-8`) allowed, case-insensitive.
fn is_json(value: Option<&ureq::http::HeaderValue>) -> bool {
    let Some(Ok(value)) = value.map(|v| v.to_str()) else {
        return false;
    };
    let media = value.split(';').next().unwrap_or("").trim();
    media.eq_ignore_ascii_case("application/json")
}

fn transport_of(error: &ureq::Error) -> TransportError {
    match error {
        ureq::Error::Timeout(_) => TransportError::Timeout,
        ureq::Error::Io(e) => transport_of_io(e),
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed | ureq::Error::BadUri(_) => {
            TransportError::Unreachable
        }
        _ => TransportError::ConnectionReset,
    }
}

/// A read error of the body: ureq wraps its own errors (a timeout) in `io::Error`.
fn transport_of_io(error: &io::Error) -> TransportError {
    match error
        .get_ref()
        .and_then(|e| e.downcast_ref::<ureq::Error>())
    {
        Some(inner) => transport_of(inner),
        None => TransportError::from_io(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_media_types() {
        let json = |s: &'static str| is_json(Some(&ureq::http::HeaderValue::from_static(s)));
        assert!(json("application/json"));
        assert!(json("Application/JSON; charset=utf-8"));
        assert!(!json("text/html"));
        assert!(!json("application/json-seq"));
        assert!(!json("text/plain; application/json"));
        assert!(!is_json(None));
    }
}
