//! Integration tests of airlock-guard: one binary, a module per area.

mod conformance;
mod loading;
mod pipeline;
mod properties;
mod util;
