//! # airlock-harness
//!
//! Contract testing for tool adapters guarded by Airlock, as a library for an adapter
//! crate's own `cargo test`: run every fixture and adversarial case of a contract through
//! your adapter and get the findings.
//!
//! ```
//! use airlock_harness::{Adapter, AdapterFailure, Answer, Check, Upstream};
//! use airlock_guard::{Contract, Guard, Request};
//!
//! /// An adapter crate's adapter: its own code around the guard.
//! struct MyAdapter(Guard);
//!
//! impl Adapter for MyAdapter {
//!     fn answer(&mut self, request: &Request, upstream: &Upstream) -> Result<Answer, AdapterFailure> {
//!         let admission = match upstream {
//!             Upstream::Body(bytes) => self.0.admit(request, bytes),
//!             Upstream::Transport(e) => self.0.admit_transport_error(request, *e),
//!         };
//!         Ok(Answer::Bytes(admission.agent().to_json_string().into_bytes()))
//!     }
//! }
//!
//! let guard = Guard::new(Contract::load("../schemas/review_status")?);
//! Check::contract("../schemas/review_status")
//!     .run(&mut MyAdapter(guard))?
//!     .assert_clean();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## The API
//!
//! Everything an adapter crate needs is at the root:
//! * to check: [`Check`] (the run, a builder), [`Adapter`] (what you implement, or
//!   [`replaying`] around your crate's judging path, or [`ExecAdapter`] for a program
//!   speaking the exec protocol, or [`GuardAdapter`] for the guard itself), [`Answer`],
//!   [`AdapterFailure`], [`AnswerReadError`], [`Upstream`]; a case is a [`Case`] with
//!   its [`Expectation`];
//! * what a run found: [`Report`], [`ContractReport`], [`Finding`], [`FindingKind`],
//!   [`Severity`], [`Conclusion`], [`ClassSummary`], [`Reproducer`], [`Shard`], and
//!   [`CheckError`] (with [`CorpusError`]) when a contract cannot be checked;
//! * to fuzz the adapter: [`AdapterFuzzer`], [`RunOptions`], [`Run`], [`AdapterFinding`],
//!   [`Dictionary`], [`Signal`], [`fuzz_adapter`] (a libFuzzer target's body); a file that
//!   cannot be written is a [`WriteFileError`].
//!
//! The modules themselves are the `airlock` binary's and Airlock's own tests': they are
//! hidden from these docs and may change in any release.
#![deny(missing_docs)]

// The layer every capability shares (report primitives, answer and shape reading,
// pointers, the subject under test, the load error): never public as such.
mod base;

// The case and corpus model, under everything.
#[doc(hidden)]
pub mod cases;
#[doc(hidden)]
pub mod corpus;
#[doc(hidden)]
pub mod schema;
#[doc(hidden)]
pub mod validate;

// Adapters under test: in process, then across the exec protocol.
#[doc(hidden)]
pub mod adapter;
#[doc(hidden)]
pub mod exec;

// The capabilities, each depending only on what is above in this list.
#[doc(hidden)]
pub mod adversary;
#[doc(hidden)]
pub mod certify;
#[doc(hidden)]
pub mod check;
#[doc(hidden)]
pub mod fuzz;
#[doc(hidden)]
pub mod init;
#[doc(hidden)]
pub mod lint;
#[doc(hidden)]
pub mod mcp;

pub use adapter::{replaying, Adapter, AdapterFailure, GuardAdapter, Replaying};
pub use base::answer::{Answer, AnswerReadError};
pub use base::error::{CheckError, WriteFileError};
pub use cases::{Case, Expectation, Upstream};
pub use check::report::{
    ClassSummary, Conclusion, ContractReport, Finding, FindingKind, Report, Severity,
};
pub use check::{Check, Reproducer, Shard};
pub use corpus::CorpusError;
pub use exec::ExecAdapter;
pub use fuzz::adapter::Signal;
pub use fuzz::adapter::{adapter as fuzz_adapter, AdapterFinding, AdapterFuzzer, Run, RunOptions};
pub use fuzz::Dictionary;
