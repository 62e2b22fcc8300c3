//! Upstream failures and retries. Retryability comes from the contract's policy, never
//! from the upstream's own flag; every attempt is judged afresh and a success is never
//! carried over from one call to another.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::{Duration, Instant};

use crate::guard::{Admission, Guard};
use crate::projection::ErrorCode;
use crate::request::Request;

/// A failure before any body arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportError {
    /// The upstream did not answer in time.
    Timeout,
    /// The connection was reset or closed mid-response.
    ConnectionReset,
    /// The upstream could not be reached.
    Unreachable,
}

impl TransportError {
    /// Every transport error, in declaration order.
    pub const ALL: [TransportError; 3] = [
        TransportError::Timeout,
        TransportError::ConnectionReset,
        TransportError::Unreachable,
    ];

    /// The exec protocol's spelling (`timeout`, `connection_reset`, `unreachable`).
    pub fn as_str(self) -> &'static str {
        match self {
            TransportError::Timeout => "timeout",
            TransportError::ConnectionReset => "connection_reset",
            TransportError::Unreachable => "unreachable",
        }
    }

    /// The transport error with this spelling.
    pub fn from_wire(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The transport error an I/O error while reading a body stands for.
    pub fn from_io(error: &std::io::Error) -> Self {
        use std::io::ErrorKind as K;
        match error.kind() {
            K::TimedOut | K::WouldBlock => TransportError::Timeout,
            K::ConnectionRefused | K::NotFound | K::AddrNotAvailable | K::NotConnected => {
                TransportError::Unreachable
            }
            _ => TransportError::ConnectionReset,
        }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The contract's retry policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    deadline: Duration,
    retryable: Vec<ErrorCode>,
}

impl RetryPolicy {
    /// A policy; `max_attempts` of 0 is taken as 1.
    pub fn new(max_attempts: u32, deadline: Duration, retryable: Vec<ErrorCode>) -> Self {
        Self {
            max_attempts: max_attempts.max(1),
            deadline,
            retryable,
        }
    }

    /// At most this many calls.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// No attempt starts after this much time.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// The codes worth another attempt.
    pub fn retryable(&self) -> &[ErrorCode] {
        &self.retryable
    }

    /// Whether `code` is worth another attempt. A rejection (`INVALID_RESPONSE`,
    /// `OUTCOME_UNVERIFIED`, whose retry the tool's `idempotent` decides) is never made
    /// retryable by the policy's list.
    pub fn is_retryable(&self, code: ErrorCode) -> bool {
        !code.is_rejection() && self.retryable.contains(&code)
    }
}

impl Default for RetryPolicy {
    /// 3 attempts within 10 s, retrying `UPSTREAM_UNAVAILABLE`.
    fn default() -> Self {
        Self::new(
            3,
            Duration::from_secs(10),
            vec![ErrorCode::UpstreamUnavailable],
        )
    }
}

/// Why the retry driver stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// A response was admitted (success or non-retryable failure envelope).
    Settled,
    /// The last attempt was rejected or failed in a way the policy does not retry.
    NotRetryable,
    /// The policy's attempts were used up.
    AttemptsExhausted,
    /// The deadline passed before another attempt could start.
    DeadlinePassed,
}

/// The result of [`Guard::call`]: the final admission and every attempt's.
#[derive(Debug)]
pub struct RetryOutcome {
    attempts: Vec<Admission>,
    stop: StopReason,
}

impl RetryOutcome {
    /// The last attempt's admission: what the agent is given.
    pub fn final_admission(&self) -> &Admission {
        self.attempts
            .last()
            .expect("the driver always makes at least one attempt")
    }

    /// Every attempt, in order (each with its own audit record).
    pub fn attempts(&self) -> &[Admission] {
        &self.attempts
    }

    /// Why the driver stopped.
    pub fn stop_reason(&self) -> StopReason {
        self.stop
    }
}

impl Guard {
    /// Call `upstream` under the contract's retry policy, judging every attempt afresh.
    ///
    /// `upstream` gets the 1-based attempt number and returns the raw body or a transport
    /// error. The driver stops on the first admitted response, on a failure the policy does
    /// not retry, after `max_attempts`, or when the deadline has passed.
    pub fn call<F>(&self, request: &Request, upstream: F) -> RetryOutcome
    where
        F: FnMut(u32) -> Result<Vec<u8>, TransportError>,
    {
        let start = Instant::now();
        self.call_with_clock(request, upstream, || start.elapsed())
    }

    /// [`Guard::call`] with an injected clock (`elapsed` since the first attempt), for
    /// deterministic tests.
    pub fn call_with_clock<F, C>(
        &self,
        request: &Request,
        mut upstream: F,
        mut elapsed: C,
    ) -> RetryOutcome
    where
        F: FnMut(u32) -> Result<Vec<u8>, TransportError>,
        C: FnMut() -> Duration,
    {
        let policy = self.contract().retry();
        let mut attempts = Vec::new();
        let mut attempt = 1;
        loop {
            let mut admission = match upstream(attempt) {
                Ok(body) => self.admit(request, &body),
                Err(error) => self.admit_transport_error(request, error),
            };
            admission.set_attempt(attempt);
            let retry = match admission.agent().error() {
                None => false,
                Some((_, retryable)) => retryable,
            };
            let settled = admission.audit().verdict().is_admitted() && !retry;
            attempts.push(admission);
            let stop = if settled {
                StopReason::Settled
            } else if !retry {
                StopReason::NotRetryable
            } else if attempt >= policy.max_attempts() {
                StopReason::AttemptsExhausted
            } else if elapsed() >= policy.deadline() {
                StopReason::DeadlinePassed
            } else {
                attempt += 1;
                continue;
            };
            return RetryOutcome { attempts, stop };
        }
    }
}
