//! Upstream failures and the retry policy. Retryability comes from the contract's policy,
//! never from the upstream's own flag. The driver that applies it, `Guard::call`
//! (`guard/call.rs`), judges every attempt afresh.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

use crate::projection::ErrorCode;

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
