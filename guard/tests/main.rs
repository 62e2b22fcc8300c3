//! Integration tests of airlock-guard: one binary, a module per area.

mod conformance;
mod dialects;
mod loading;
mod mcp;
mod pipeline;
mod properties;
mod upstream;
mod util;
