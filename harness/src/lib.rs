//! # airlock-harness
//!
//! Contract testing for tool adapters guarded by Airlock: the fixture corpus of a
//! contract, the exec protocol (`airlock guard` serves it with the guard), and
//! standalone validation. The `airlock` binary is a thin layer over this library.
//!
//! ```
//! use airlock_guard::{Contract, Guard};
//! use airlock_harness::corpus::{corpus_dir, Corpus, Expect};
//!
//! let contract = Contract::load("../schemas/deploy_status")?;
//! let corpus = Corpus::load(&corpus_dir(&contract).unwrap())?;
//! let guard = Guard::new(contract);
//! for fixture in &corpus.fixtures {
//!     let admitted = guard.admit(&fixture.request, &fixture.bytes).is_admitted();
//!     assert_eq!(admitted, fixture.expect == Expect::Accept, "{}", fixture.path.display());
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod adapter;
pub mod adversary;
pub mod cases;
pub mod certify;
pub mod check;
pub mod corpus;
pub mod exec;
pub mod exit;
pub mod fuzz;
pub mod init;
pub mod lint;
pub mod mcp;

pub mod schema;
pub mod validate;

/// Findings and their renderings (human, JSON, JUnit, SARIF, Markdown).
pub use check::report;
