//! The retry driver: [`Guard::call`] judges every attempt afresh under the contract's
//! [`RetryPolicy`](crate::retry::RetryPolicy); a success is never carried over from one call to
//! another.

use std::time::{Duration, Instant};

use super::{Admission, Guard};
use crate::request::Request;
use crate::retry::{StopReason, TransportError};

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
        let mut attempts = Vec::new();
        let mut attempt = 1;
        loop {
            let mut admission = match upstream(attempt) {
                Ok(body) => self.admit(request, &body),
                Err(error) => self.admit_transport_error(request, error),
            };
            admission.set_attempt(attempt);
            let stop = self.stop_after(&admission, attempt, &mut elapsed);
            attempts.push(admission);
            let Some(stop) = stop else {
                attempt += 1;
                continue;
            };
            return RetryOutcome { attempts, stop };
        }
    }

    /// The retry driver's decision after `admission`, the `attempt`-th (from 1): `None` to
    /// try again (its failure is retryable by the policy, attempts remain and the deadline
    /// has not passed), else why the call stops. `elapsed` (since the first attempt
    /// started) is read only when the rest would retry. For drivers of their own, as the
    /// bindings' asynchronous ones, to stop exactly where [`Guard::call`] does.
    pub fn stop_after(
        &self,
        admission: &Admission,
        attempt: u32,
        elapsed: impl FnOnce() -> Duration,
    ) -> Option<StopReason> {
        let policy = self.contract().retry();
        let retry = admission
            .agent()
            .error()
            .is_some_and(|(_, retryable)| retryable);
        if admission.audit().verdict().is_admitted() && !retry {
            Some(StopReason::Settled)
        } else if !retry {
            Some(StopReason::NotRetryable)
        } else if attempt >= policy.max_attempts() {
            Some(StopReason::AttemptsExhausted)
        } else if elapsed() >= policy.deadline() {
            Some(StopReason::DeadlinePassed)
        } else {
            None
        }
    }
}
