//! What a contract's raw response is (`[input] kind`): the envelope itself, an MCP result,
//! a vendor document or a command's output. Each kind carries what its decode step needs
//! (a vendor input its compiled schema); the manifest's `[input]` is read in `contract`.

use crate::mcp::McpInput;
use crate::upstream::{LinesInput, VendorInput};

/// What the raw response of a contract is (`[input] kind` in `contract.toml`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum InputKind {
    /// The upstream speaks the contract's envelope (`tool`, `request_id`, `outcome`,
    /// `data` or `error`); the schema judges the whole body. The default.
    #[default]
    Envelope,
    /// The raw bytes are the JSON-RPC response to an MCP `tools/call`; the schema (the
    /// tool's `outputSchema`) judges `structuredContent`.
    Mcp(McpInput),
    /// The raw bytes are a vendor's own document, judged by its own schema, then mapped
    /// member by member into the envelope's `data`.
    Vendor(VendorInput),
    /// The raw bytes are a command's output under a line grammar, read into an object and
    /// (optionally) mapped into `data`.
    Lines(LinesInput),
}

impl InputKind {
    /// The MCP settings, when the contract is an MCP tool contract.
    pub fn mcp(&self) -> Option<&McpInput> {
        match self {
            InputKind::Mcp(mcp) => Some(mcp),
            _ => None,
        }
    }

    /// The manifest spelling: `envelope`, `mcp`, `vendor` or `lines`.
    pub fn as_str(&self) -> &'static str {
        match self {
            InputKind::Envelope => "envelope",
            InputKind::Mcp(_) => "mcp",
            InputKind::Vendor(_) => "vendor",
            InputKind::Lines(_) => "lines",
        }
    }

    /// The `data` members filled by a mapping (vendor and lines kinds).
    pub fn mapped_fields(&self) -> Vec<&str> {
        let map = match self {
            InputKind::Vendor(v) => &v.map,
            InputKind::Lines(l) => &l.map,
            _ => return Vec::new(),
        };
        map.iter().map(|m| m.field.as_str()).collect()
    }
}

/// The longest line a grammar may declare.
pub const MAX_LINE_BYTES_CEILING: usize = 65_536;
