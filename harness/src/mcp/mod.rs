//! MCP: tool contracts imported from a server's `tools/list` ([`import`]) and the stdio
//! proxy that judges `tools/call` results by them ([`proxy`]).

pub mod import;
pub mod proxy;
mod wire;
