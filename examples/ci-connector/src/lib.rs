//! A worked adapter crate: copy it to connect a real upstream to an agent through Airlock.
//!
//! Two adapters, each around its contract's [`Guard`]:
//!
//! * [`CiConnector`] asks a CI server's REST API (GitLab's
//!   `GET /projects/:id/pipelines/:pipeline_id`) over HTTP and judges the vendor's own
//!   pipeline document with the `ci_pipeline_status` contract (`[input] kind = "vendor"`:
//!   the guard maps the fields it names into a fresh envelope; nothing else can reach the
//!   agent).
//! * [`GitBranchHead`] runs `git for-each-ref` in a repository and judges its text with the
//!   `git_branch_head` contract (`[input] kind = "lines"`: a strict line grammar).
//!
//! Both go through the same judging path, [`Judge::run`]: the contract's retry policy
//! ([`Guard::call`]), every attempt judged afresh, one audit record (a JSON line) per
//! attempt written to the writer the adapter was given. A body is read under the
//! contract's limit: [`read_limited`] stops at `max_bytes + 1` bytes and the guard rejects
//! the body without reading the rest (the same reader [`Guard::admit_reader`] uses).
//!
//! Under `airlock check` (in this crate's tests, and `ci-connector --exec-protocol`) the
//! upstream's bytes come from the case instead of the network: [`Judge::replay`] feeds them
//! to the same [`Judge::run`], so the harness checks the code the adapters run.

use airlock_guard::{read_limited, Admission, Contract, Guard, ReadError, Request, TransportError};
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Mutex;

mod command;
pub mod exec;
mod http;

pub use command::{GitBranchHead, FOR_EACH_REF_FORMAT};
pub use http::CiConnector;

/// What went wrong around a judgement (never a property of the upstream's answer: those
/// are agent values).
#[derive(Debug)]
pub enum ConnectorError {
    /// The contract folder did not load.
    Contract(airlock_guard::ContractError),
    /// The request cannot be sent: a parameter the upstream call needs is missing or
    /// malformed. Nothing was sent.
    BadRequest(String),
    /// The audit record could not be written; the answer is withheld (the operator's
    /// record is part of the answer).
    Audit(io::Error),
}

impl std::fmt::Display for ConnectorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectorError::Contract(e) => write!(f, "contract: {e}"),
            ConnectorError::BadRequest(reason) => write!(f, "bad request: {reason}"),
            ConnectorError::Audit(e) => write!(f, "writing the audit record: {e}"),
        }
    }
}

impl std::error::Error for ConnectorError {}

/// One contract's guard and the writer its audit records go to.
pub struct Judge {
    guard: Guard,
    audit: Mutex<Box<dyn Write + Send>>,
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge")
            .field("tool", &self.guard.contract().tool())
            .finish_non_exhaustive()
    }
}

impl Judge {
    /// The contract in `contract_dir`, with this adapter's name and version in every audit
    /// record, and `endpoint` when the adapter has one.
    ///
    /// # Errors
    ///
    /// [`ConnectorError::Contract`] when the contract does not load.
    pub fn load(
        contract_dir: &Path,
        endpoint: Option<&str>,
        audit: Box<dyn Write + Send>,
    ) -> Result<Self, ConnectorError> {
        let contract = Contract::load(contract_dir).map_err(ConnectorError::Contract)?;
        let mut builder =
            Guard::builder(contract).adapter(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"));
        if let Some(endpoint) = endpoint {
            builder = builder.endpoint(endpoint);
        }
        Ok(Self {
            guard: builder.build(),
            audit: Mutex::new(audit),
        })
    }

    /// The guard.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// The contract's byte limit.
    pub fn max_bytes(&self) -> u64 {
        self.guard.contract().limits().max_bytes
    }

    /// Call the upstream under the contract's retry policy: `attempt` gets the 1-based
    /// attempt number and returns what the upstream gave (see [`Judge::read_body`]). Every
    /// attempt's audit record is written, in order; the last attempt's admission is the
    /// answer.
    ///
    /// # Errors
    ///
    /// [`ConnectorError::Audit`] when a record cannot be written.
    pub fn run<F>(&self, request: &Request, attempt: F) -> Result<Admission, ConnectorError>
    where
        F: FnMut(u32) -> Result<Vec<u8>, TransportError>,
    {
        let outcome = self.guard.call(request, attempt);
        {
            let mut audit = self.audit.lock().unwrap_or_else(|p| p.into_inner());
            for admission in outcome.attempts() {
                writeln!(audit, "{}", admission.audit().to_json_line())
                    .map_err(ConnectorError::Audit)?;
            }
            audit.flush().map_err(ConnectorError::Audit)?;
        }
        Ok(outcome.final_admission().clone())
    }

    /// Judge what a case says the upstream did, through [`Judge::run`]: the body (or the
    /// transport error) stands for every attempt, as a replayed upstream would.
    ///
    /// # Errors
    ///
    /// [`ConnectorError::Audit`] when a record cannot be written.
    pub fn replay(
        &self,
        request: &Request,
        upstream: Result<&[u8], TransportError>,
    ) -> Result<Admission, ConnectorError> {
        self.run(request, |_| upstream.map(<[u8]>::to_vec))
    }

    /// Read a body under the contract's limit: at most `max_bytes + 1` bytes are taken
    /// from `reader`. An over-size body is returned as its first `max_bytes + 1` bytes,
    /// which the guard rejects at the `limits` stage without reading further; a read
    /// error is the transport error `transport` names.
    ///
    /// # Errors
    ///
    /// The transport error of a failed read.
    pub fn read_body<R: Read>(
        &self,
        reader: R,
        transport: impl Fn(&io::Error) -> TransportError,
    ) -> Result<Vec<u8>, TransportError> {
        match read_limited(reader, self.max_bytes()) {
            Ok(body) => Ok(body),
            Err(ReadError::TooLarge { read }) => Ok(read),
            Err(ReadError::Io(error)) => Err(transport(&error)),
        }
    }
}
