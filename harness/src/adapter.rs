//! Adapters under test, in process: anything implementing [`Adapter`] (the guard itself,
//! [`GuardAdapter`]; an adapter crate's own code, or its judging path through
//! [`replaying`]). Out of process, a program speaking the exec protocol is
//! `crate::exec::ExecAdapter`, built on this trait.

use airlock_guard::{Admission, Guard, Request, TransportError};
use std::collections::HashMap;
use std::fmt;
use std::ops::ControlFlow;

pub use crate::base::answer::{Answer, AnswerReadError};
use crate::cases::Upstream;

/// Why an adapter gave no agent value for a case: each is a finding. Its `Display` is
/// the finding's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AdapterFailure {
    /// It died (or panicked, in process).
    #[error("adapter crashed: {0}")]
    Crash(String),
    /// It did not answer within the per-case timeout.
    #[error("adapter did not answer in time")]
    Timeout,
    /// It answered with something that is not a protocol line for this case.
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// It wrote a line longer than the harness reads.
    #[error("adapter flooded its output (an answer line over the limit)")]
    Flood,
}

/// An adapter under test: given the request and what the upstream did, what the agent
/// receives. Answer with the exact bytes the agent gets ([`Answer::Bytes`]) when your
/// adapter hands the agent text: they are read strictly, so a duplicate member that one
/// JSON parser keeps and another drops is a finding. [`Answer::Value`] is a convenience.
///
/// ```
/// use airlock_harness::{Adapter, AdapterFailure, Answer, Upstream};
/// use airlock_guard::{Guard, Request};
///
/// /// An adapter crate's adapter: its own code around the guard.
/// struct MyAdapter(Guard);
///
/// impl Adapter for MyAdapter {
///     fn answer(&mut self, request: &Request, upstream: &Upstream) -> Result<Answer, AdapterFailure> {
///         let admission = match upstream {
///             Upstream::Body(bytes) => self.0.admit(request, bytes),
///             Upstream::Transport(e) => self.0.admit_transport_error(request, *e),
///         };
///         // The text this adapter sends its agent, byte for byte.
///         Ok(Answer::Bytes(admission.agent().to_json_string().into_bytes()))
///     }
/// }
/// ```
pub trait Adapter {
    /// What the agent receives for one case.
    ///
    /// # Errors
    ///
    /// When the adapter crashed, hung or broke the protocol.
    fn answer(&mut self, request: &Request, upstream: &Upstream) -> Result<Answer, AdapterFailure>;

    /// The answers for several cases, handed to `each` in order with the case's index,
    /// until `each` breaks. The default asks one by one; an adapter across a pipe
    /// overrides it to keep several cases in flight.
    fn answers(
        &mut self,
        cases: &[(&Request, &Upstream)],
        each: &mut dyn FnMut(usize, Result<Answer, AdapterFailure>) -> ControlFlow<()>,
    ) {
        for (index, (request, upstream)) in cases.iter().enumerate() {
            if each(index, self.answer(request, upstream)).is_break() {
                return;
            }
        }
    }

    /// Called after the last case: report anything the adapter did after it (extra
    /// output, a crash on close). Default: nothing.
    fn finish(&mut self) -> Vec<AdapterFailure> {
        Vec::new()
    }
}

/// The guard as the adapter under test: one guard per contract, routed by the request's
/// `tool` (or the only contract when the request names none).
#[derive(Debug)]
pub struct GuardAdapter {
    guards: HashMap<String, Guard>,
}

impl GuardAdapter {
    /// An adapter serving these guards.
    pub fn new(guards: impl IntoIterator<Item = Guard>) -> Self {
        Self {
            guards: guards
                .into_iter()
                .map(|g| (g.contract().tool().to_owned(), g))
                .collect(),
        }
    }

    /// The guard for `request`.
    pub fn route(&self, request: &Request) -> Option<&Guard> {
        match &request.tool {
            Some(tool) => self.guards.get(tool),
            None if self.guards.len() == 1 => self.guards.values().next(),
            None => None,
        }
    }
}

impl Adapter for GuardAdapter {
    fn answer(&mut self, request: &Request, upstream: &Upstream) -> Result<Answer, AdapterFailure> {
        let guard = self.route(request).ok_or_else(|| {
            AdapterFailure::Protocol(match &request.tool {
                Some(tool) => format!("no contract for tool {tool:?}"),
                None => "the request names no tool and several contracts are served".into(),
            })
        })?;
        Ok(Answer::Value(match upstream {
            Upstream::Body(bytes) => guard.admit(request, bytes).agent().to_json(),
            Upstream::Transport(error) => guard
                .admit_transport_error(request, *error)
                .agent()
                .to_json(),
        }))
    }
}

/// An adapter crate's own judging path as the adapter under test: a function that
/// admits a replayed upstream (the body, or the transport error) the way the adapter
/// does, and whose [`Admission`]'s agent value is what the agent is given. An error of
/// the function is a crash. Build it with [`replaying`].
pub struct Replaying<F>(F);

/// An adapter from `judge`, a function that takes the request and the upstream's body
/// (or its transport error) and returns the adapter's admission.
///
/// ```
/// # use airlock_harness::{replaying, Adapter, Check};
/// # let contract = airlock_guard::Contract::load("../schemas/review_status").unwrap();
/// # let guard = airlock_guard::Guard::new(contract);
/// // In an adapter crate: `my_adapter.replay(request, upstream)` runs the crate's own
/// // path from the upstream's answer to the agent value.
/// let mut adapter = replaying(|request, upstream| match upstream {
///     Ok(body) => Ok::<_, std::convert::Infallible>(guard.admit(request, body)),
///     Err(error) => Ok(guard.admit_transport_error(request, error)),
/// });
/// Check::contract("../schemas/review_status").run(&mut adapter).unwrap().assert_clean();
/// ```
pub fn replaying<F, E>(judge: F) -> Replaying<F>
where
    F: FnMut(&Request, Result<&[u8], TransportError>) -> Result<Admission, E>,
    E: fmt::Display,
{
    Replaying(judge)
}

impl<F, E> Adapter for Replaying<F>
where
    F: FnMut(&Request, Result<&[u8], TransportError>) -> Result<Admission, E>,
    E: fmt::Display,
{
    fn answer(&mut self, request: &Request, upstream: &Upstream) -> Result<Answer, AdapterFailure> {
        let upstream = match upstream {
            Upstream::Body(bytes) => Ok(bytes.as_slice()),
            Upstream::Transport(error) => Err(*error),
        };
        let admission =
            (self.0)(request, upstream).map_err(|e| AdapterFailure::Crash(e.to_string()))?;
        // The exact bytes the agent is given.
        Ok(Answer::Bytes(
            admission.agent().to_json_string().into_bytes(),
        ))
    }
}

impl<F> fmt::Debug for Replaying<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Replaying(..)")
    }
}
