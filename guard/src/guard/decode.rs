//! The decode step: what the contract's input kind makes of a body within the byte limit,
//! before the envelope stages judge it. One type says what was found, one function finds
//! it, and this is the only `match` on the input kind a response goes through.

use serde_json::{Map, Value};

use crate::audit::{Diagnostic, Stage};
use crate::doc::{Document, Node};
use crate::input::InputKind;
use crate::mcp;
use crate::parse::{parse_doc, ParseError};
use crate::projection::ErrorCode;
use crate::request::Request;
use crate::upstream::{failure_code, map_data, read_lines};

/// What the decode step found in a body.
pub(super) enum Decoded<'a> {
    /// The body is an envelope (`[input] kind = "envelope"`): judged as it is.
    Envelope(Node<'a>),
    /// The `data` mapped from a vendor document or read from a command's lines: the guard
    /// builds the envelope around it.
    Mapped(Map<String, Value>),
    /// An MCP result's `structuredContent`: judged by the envelope stages under
    /// [`STRUCTURED_CONTENT`](crate::mcp::STRUCTURED_CONTENT).
    Structured(Node<'a>),
    /// A failure the upstream declared: a vendor failure rule matched (no details), or an
    /// MCP result with `isError: true` (its `structuredContent`, if any, which the
    /// contract's error schema may admit as details).
    Failure {
        /// The failure code the contract gives it.
        code: ErrorCode,
        /// The `structuredContent` of an MCP tool error.
        structured: Option<Node<'a>>,
    },
    /// A JSON-RPC `error` member answering an MCP call: a transport failure; the operator
    /// gets its code.
    RpcError(Diagnostic),
}

/// Decode `body` as `input` says. The body's strict parse (at `max_depth`) is kept in
/// `parsed`, which the nodes of the result borrow; a command's output is not JSON and is
/// read by its line grammar instead.
///
/// # Errors
///
/// The diagnostic of the first rule the body breaks: the parse, the MCP message's shape,
/// the vendor schema, the line grammar or a mapping.
pub(super) fn decode<'p, 'b: 'p>(
    input: &InputKind,
    max_depth: usize,
    request: &Request,
    body: &'b [u8],
    parsed: &'p mut Option<Document<'b>>,
) -> Result<Decoded<'p>, Diagnostic> {
    match input {
        InputKind::Envelope => Ok(Decoded::Envelope(parse_into(parsed, body, max_depth)?)),
        InputKind::Mcp(mcp) => {
            let doc = parse_into(parsed, body, max_depth)?;
            Ok(match mcp::decode(mcp, request, doc, max_depth)? {
                mcp::Decoded::Structured(structured) => Decoded::Structured(structured),
                mcp::Decoded::ToolError(structured) => Decoded::Failure {
                    code: mcp.tool_error,
                    structured,
                },
                mcp::Decoded::RpcError(diagnostic) => Decoded::RpcError(diagnostic),
            })
        }
        InputKind::Vendor(vendor) => {
            let doc = parse_into(parsed, body, max_depth)?;
            vendor
                .schema()
                .judge_doc(doc, body.len())
                .map_err(|d| d.restaged(Stage::Decode))?;
            if let Some(code) = failure_code(&vendor.failure, doc) {
                return Ok(Decoded::Failure {
                    code,
                    structured: None,
                });
            }
            Ok(Decoded::Mapped(map_data(&vendor.map, doc)?))
        }
        InputKind::Lines(lines) => {
            let object = read_lines(lines, body)?;
            if lines.map.is_empty() {
                return Ok(Decoded::Mapped(object));
            }
            // An object of strings, one level: depth 2 always holds.
            let data = with_reparsed(&Value::Object(object), 2, |source, _| {
                map_data(&lines.map, source)
            })?;
            Ok(Decoded::Mapped(data))
        }
    }
}

/// The strict parse of `body` at `max_depth`, kept in `parsed`: its root.
fn parse_into<'p, 'b: 'p>(
    parsed: &'p mut Option<Document<'b>>,
    body: &'b [u8],
    max_depth: usize,
) -> Result<Node<'p>, Diagnostic> {
    let document = parse_doc(body, max_depth).map_err(ParseError::into_diagnostic)?;
    Ok(parsed.insert(document).root())
}

/// `value`, which the guard built, written out and read back by the strict parser at
/// `max_depth`; `judge` gets the document's root and its length in bytes.
///
/// Why the round trip, rather than judging `value` directly: the parser's limits then
/// apply to what the guard built exactly as to a body that arrived. A built envelope is
/// read at `max_depth + 1` (wrapping `data` adds one level), and a mapped value may be as
/// deep as its source allows (a mapping of a whole vendor document, `from = ""`, or a
/// nested `table` value): its rejection is the parser's, with the parser's code and byte
/// offset in the written envelope, and the schema stage is given the written length. The
/// later stages also read nothing but strict-parser documents. Judging the value in place
/// would change those verdicts and diagnostics, so the round trip stays, here alone.
pub(super) fn with_reparsed<R>(
    value: &Value,
    max_depth: usize,
    judge: impl FnOnce(Node<'_>, usize) -> Result<R, Diagnostic>,
) -> Result<R, Diagnostic> {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    let parsed = parse_doc(&bytes, max_depth).map_err(ParseError::into_diagnostic)?;
    judge(parsed.root(), bytes.len())
}
