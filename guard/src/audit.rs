//! Stage 7: the operator's record. Diagnostics may quote the input (that is their job);
//! they live here, in types the agent value is never built from.

use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// A stage of the pipeline, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Stage {
    /// The request itself was unusable for this contract (wrong tool).
    Request,
    /// The transport failed before a body arrived.
    Transport,
    /// Byte limit.
    Limits,
    /// Strict parse.
    Parse,
    /// The decode step of an input kind other than the envelope (the JSON-RPC and
    /// `CallToolResult` shapes of an MCP message, text agreement, content kinds).
    Decode,
    /// JSON Schema.
    Schema,
    /// Request binding: request id and parameter checks.
    Binding,
    /// Semantic checks, declarative and custom.
    Checks,
    /// Projection into the agent value (the last stage; an admitted response reached it).
    Projection,
}

impl Stage {
    /// The stage's name as used in diagnostics and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Request => "request",
            Stage::Transport => "transport",
            Stage::Limits => "limits",
            Stage::Parse => "parse",
            Stage::Decode => "decode",
            Stage::Schema => "schema",
            Stage::Binding => "binding",
            Stage::Checks => "checks",
            Stage::Projection => "projection",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a response was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A success envelope honoured the contract; the agent gets its projection.
    Admitted,
    /// A failure envelope honoured the contract; the agent gets its code.
    UpstreamFailure,
    /// The transport failed; the agent gets `UPSTREAM_UNAVAILABLE`.
    TransportFailure,
    /// The response broke the contract; the agent gets the fixed failure.
    Rejected,
}

impl Verdict {
    /// Whether the response itself was admitted (success or failure envelope).
    pub fn is_admitted(self) -> bool {
        matches!(self, Verdict::Admitted | Verdict::UpstreamFailure)
    }
}

/// The longest text a diagnostic keeps of a message or an instance path: a quoted value
/// is cut there, so a diagnostic's size does not depend on the body's.
pub(crate) const MAX_TEXT_BYTES: usize = 512;

/// A rejection by the decode step (an MCP message's shape, a vendor mapping, a command's
/// lines) at instance path `at`. `masked` is `message` without the instance values it
/// quotes; `None` when it quotes none (it is then its own masked form).
pub(crate) fn decode_rejection(
    keyword: &str,
    at: &str,
    message: impl Into<String>,
    masked: Option<String>,
) -> Diagnostic {
    let message = message.into();
    let masked = masked.unwrap_or_else(|| message.clone());
    Diagnostic::new(Stage::Decode, keyword, message, masked).with_instance_path(at)
}

/// `value`'s `Display`, written into at most [`MAX_TEXT_BYTES`] bytes: formatting stops
/// there (a huge value is never rendered whole) and the text ends with a cut mark.
pub(crate) fn bounded(value: &(impl fmt::Display + ?Sized)) -> String {
    struct Capped {
        out: String,
        cut: bool,
    }
    impl fmt::Write for Capped {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let room = MAX_TEXT_BYTES - self.out.len();
            if s.len() <= room {
                self.out.push_str(s);
                return Ok(());
            }
            let mut end = room;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            self.out.push_str(&s[..end]);
            self.cut = true;
            Err(fmt::Error)
        }
    }
    let mut capped = Capped {
        out: String::new(),
        cut: false,
    };
    // An error here is the cut (or a failing `Display`, which leaves what it wrote).
    let _ = fmt::write(&mut capped, format_args!("{value}"));
    if capped.cut {
        capped.out.push_str(CUT_MARK);
    }
    capped.out
}

/// Ends a text cut at [`MAX_TEXT_BYTES`].
const CUT_MARK: &str = "… (cut)";

/// `text` cut at twice [`MAX_TEXT_BYTES`] (room for a bounded message and its context).
fn capped(text: String) -> String {
    if text.len() <= 2 * MAX_TEXT_BYTES {
        return text;
    }
    let mut end = 2 * MAX_TEXT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut text = text;
    text.truncate(end);
    text.push_str(CUT_MARK);
    text
}

/// Why a response was rejected, for the operator. (Boxed: results carrying it stay small.)
///
/// Every text it holds is bounded: messages and paths are cut at a kilobyte, and at most
/// a few causes are kept, so its size does not depend on the body's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Diagnostic {
    inner: Box<DiagnosticInner>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct DiagnosticInner {
    stage: Stage,
    keyword: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instance_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    byte_offset: Option<usize>,
    message: String,
    #[serde(skip)]
    masked: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    causes: Vec<Diagnostic>,
}

impl Diagnostic {
    /// A diagnostic with a stage, a keyword and a message; `masked` is the same message
    /// with every value from the input left out.
    pub fn new(
        stage: Stage,
        keyword: impl Into<String>,
        message: impl Into<String>,
        masked: impl Into<String>,
    ) -> Self {
        Self {
            inner: Box::new(DiagnosticInner {
                stage,
                keyword: capped(keyword.into()),
                schema_path: None,
                instance_path: None,
                byte_offset: None,
                message: capped(message.into()),
                masked: capped(masked.into()),
                causes: Vec::new(),
            }),
        }
    }

    pub(crate) fn with_schema_path(mut self, path: impl Into<String>) -> Self {
        self.inner.schema_path = Some(capped(path.into()));
        self
    }

    pub(crate) fn with_instance_path(mut self, path: impl Into<String>) -> Self {
        // A member name can be as long as the body; the path is cut like a message.
        self.inner.instance_path = Some(capped(path.into()));
        self
    }

    /// The same diagnostic about a value found at `prefix` of the message: its instance
    /// paths (and its causes') are made absolute.
    pub(crate) fn under(mut self, prefix: &str) -> Self {
        if let Some(path) = &self.inner.instance_path {
            self.inner.instance_path = Some(capped(format!("{prefix}{path}")));
        }
        self.inner.causes = std::mem::take(&mut self.inner.causes)
            .into_iter()
            .map(|cause| cause.under(prefix))
            .collect();
        self
    }

    /// The same diagnostic, attributed to `stage` (a vendor schema judges at decode).
    pub(crate) fn restaged(mut self, stage: Stage) -> Self {
        self.inner.stage = stage;
        self
    }

    pub(crate) fn with_byte_offset(mut self, offset: usize) -> Self {
        self.inner.byte_offset = Some(offset);
        self
    }

    pub(crate) fn with_causes(mut self, causes: Vec<Diagnostic>) -> Self {
        self.inner.causes = causes;
        self
    }

    /// The stage that rejected.
    pub fn stage(&self) -> Stage {
        self.inner.stage
    }

    /// The keyword or check that failed (`additionalProperties`, `duplicate_member`,
    /// `equals_param`, …).
    pub fn keyword(&self) -> &str {
        &self.inner.keyword
    }

    /// The JSON Schema keyword location, for schema failures.
    pub fn schema_path(&self) -> Option<&str> {
        self.inner.schema_path.as_deref()
    }

    /// The JSON Pointer into the response, when known.
    pub fn instance_path(&self) -> Option<&str> {
        self.inner.instance_path.as_deref()
    }

    /// The byte offset into the raw body, when known.
    pub fn byte_offset(&self) -> Option<usize> {
        self.inner.byte_offset
    }

    /// The full message; it may quote the input.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// The message with no value from the input (paths and keywords only).
    pub fn masked_message(&self) -> &str {
        &self.inner.masked
    }

    /// Narrower failures behind this one (the branches of a `oneOf`, say).
    pub fn causes(&self) -> &[Diagnostic] {
        &self.inner.causes
    }

    /// This diagnostic's line, then a `  because …` line for each of its causes: the
    /// operator's whole account (it may quote the input, as [`Diagnostic::message`]). Each
    /// line is [`printable`](crate::printable), as `airlock admit` prints it: a line feed,
    /// an escape sequence or a bidirectional override quoted from the input is written as a
    /// `\u{…}` escape and a backslash doubled, so the input can neither break a line, forge
    /// a `because` line (nor the look of an escape) nor act on a terminal or a log viewer.
    pub fn explained(&self) -> String {
        let mut text = crate::printable(&self.to_string()).into_owned();
        for cause in self.causes() {
            text.push_str("\n  because ");
            text.push_str(&crate::printable(&cause.to_string()));
        }
        text
    }

    /// A one-line rendering that prints no instance value.
    pub fn masked(&self) -> Masked<'_> {
        Masked(self)
    }
}

impl fmt::Display for Diagnostic {
    /// `stage: keyword at /path (byte N): message`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_line(f, self, &self.inner.message)
    }
}

/// A [`Diagnostic`] rendered without instance values.
#[derive(Debug, Clone, Copy)]
pub struct Masked<'a>(&'a Diagnostic);

impl fmt::Display for Masked<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_line(f, self.0, &self.0.inner.masked)
    }
}

fn write_line(f: &mut fmt::Formatter<'_>, d: &Diagnostic, message: &str) -> fmt::Result {
    write!(f, "{}: {}", d.inner.stage, d.inner.keyword)?;
    if let Some(path) = &d.inner.instance_path {
        let shown = if path.is_empty() { "(root)" } else { path };
        write!(f, " at {shown}")?;
    }
    if let Some(offset) = d.inner.byte_offset {
        write!(f, " (byte {offset})")?;
    }
    write!(f, ": {message}")
}

/// Who produced the response, as the caller declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdapterInfo {
    /// Adapter name.
    pub name: String,
    /// Adapter version.
    pub version: String,
}

/// The record of one judgement, for the operator's log. Serialises as one JSON line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditRecord {
    pub(crate) tool: Arc<str>,
    pub(crate) contract_version: u32,
    pub(crate) schema_sha256: Arc<str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) vendor_schema_sha256: Option<Arc<str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) adapter: Option<Arc<AdapterInfo>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) endpoint: Option<Arc<str>>,
    pub(crate) request_id: Arc<str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) attempt: Option<u32>,
    pub(crate) stage: Stage,
    pub(crate) verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) diagnostic: Option<Diagnostic>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) raw_sha256: Option<Sha256Digest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) raw_len: Option<u64>,
}

impl AuditRecord {
    /// The contract's tool.
    pub fn tool(&self) -> &str {
        &self.tool
    }
    /// The version of the contract whose schema judged the response (the manifest's
    /// current version unless the contract was loaded with `Contract::load_version`).
    pub fn contract_version(&self) -> u32 {
        self.contract_version
    }
    /// SHA-256 (hex) of the schema the response was judged by.
    pub fn schema_sha256(&self) -> &str {
        &self.schema_sha256
    }
    /// SHA-256 (hex) of the vendor schema a vendor contract's raw document was judged by
    /// (`[input] schema`); `None` for other kinds of contract.
    pub fn vendor_schema_sha256(&self) -> Option<&str> {
        self.vendor_schema_sha256.as_deref()
    }
    /// The adapter, as the caller declared it.
    pub fn adapter(&self) -> Option<&AdapterInfo> {
        self.adapter.as_deref()
    }
    /// The endpoint, as the caller declared it.
    pub fn endpoint(&self) -> Option<&str> {
        self.endpoint.as_deref()
    }
    /// The outstanding request's id.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }
    /// The attempt number, when the retry driver made the call (1-based).
    pub fn attempt(&self) -> Option<u32> {
        self.attempt
    }
    /// The stage that decided: the failing stage, or `projection` when admitted.
    pub fn stage(&self) -> Stage {
        self.stage
    }
    /// The verdict.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }
    /// Why it was rejected.
    pub fn diagnostic(&self) -> Option<&Diagnostic> {
        self.diagnostic.as_ref()
    }
    /// SHA-256 (hex) of the raw bytes read (absent on a transport failure).
    pub fn raw_sha256(&self) -> Option<Sha256Digest> {
        self.raw_sha256
    }
    /// Number of raw bytes read; for an over-size body, the bytes read before stopping.
    pub fn raw_len(&self) -> Option<u64> {
        self.raw_len
    }
    /// The record as one line of JSON.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            // Serialising plain strings and numbers cannot fail; keep the log line anyway.
            format!("{{\"audit_serialisation_error\":{:?}}}", e.to_string())
        })
    }
}

/// A SHA-256 digest; displays and serialises as lower-case hex.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sha256Digest([u8; 32]);

impl Sha256Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        use sha2::{Digest, Sha256};
        Self(Sha256::digest(bytes).into())
    }

    /// The 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The 64 lower-case hex digits, written in one piece (a `write!` per byte costs
    /// about a microsecond per audit line).
    fn hex(&self) -> HexDigest {
        let mut out = [0u8; 64];
        for (pair, b) in out.chunks_exact_mut(2).zip(self.0) {
            pair[0] = HEX[usize::from(b >> 4)];
            pair[1] = HEX[usize::from(b & 0xf)];
        }
        HexDigest(out)
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A digest's hex digits: ASCII, so always a `str`.
struct HexDigest([u8; 64]);

impl HexDigest {
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl fmt::Display for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.hex().as_str())
    }
}

impl fmt::Debug for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha256Digest({self})")
    }
}

impl Serialize for Sha256Digest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.hex().as_str())
    }
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256Digest::of(bytes).hex().as_str().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_empty_input_is_the_known_digest() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        // "abc" (FIPS 180-2): every nibble value, both halves of a byte, in order.
        let digest = Sha256Digest::of(b"abc");
        let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(digest.to_string(), hex);
        assert_eq!(
            serde_json::to_string(&digest).unwrap(),
            format!("\"{hex}\"")
        );
        assert_eq!(format!("{digest:?}"), format!("Sha256Digest({hex})"));
    }

    #[test]
    fn masked_rendering_uses_the_masked_message() {
        let d = Diagnostic::new(
            Stage::Schema,
            "enum",
            "\"CANARY\" is not one of",
            "value is not one of",
        )
        .with_instance_path("/data/decision");
        assert_eq!(
            d.to_string(),
            "schema: enum at /data/decision: \"CANARY\" is not one of"
        );
        assert_eq!(
            d.masked().to_string(),
            "schema: enum at /data/decision: value is not one of"
        );
    }
}
