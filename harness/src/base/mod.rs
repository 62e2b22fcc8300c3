//! The layer under the capabilities: what `check`, the adversary, `certify`, `lint`,
//! `init`, `fuzz` and `mcp` share, depending only on the guard and on the case and
//! corpus model (`cases`, `corpus`, `schema`) below it.
//!
//! * [`answer`] — reading what an adapter gave its agent, strictly.
//! * [`shape`] — the MCP forms of an agent value, and what a value claims about its shape.
//! * [`pointer`] — JSON Pointers over values and over schema text (line and column).
//! * [`report`] — the primitives of every report: terminal and Markdown escaping, the
//!   SARIF envelope, paths and lines as shown, seed-independent locations.
//! * [`error`] — why a contract, its corpus or a run's files cannot be used.
//! * [`subject`] — the subject under test: a contract's reference guard and corpus.

pub(crate) mod answer;
pub(crate) mod error;
pub(crate) mod pointer;
pub(crate) mod report;
pub(crate) mod shape;
pub(crate) mod subject;
