//! Integration tests of airlock-harness and the `airlock` binary: one binary, a module
//! per area.

mod check;
mod cli;
mod fixtures;
mod util;
