//! What an adapter hands the agent, and how the harness reads it. The exact bytes are read
//! with the guard's strict parser (duplicate members, BOM, lone surrogates, trailing bytes,
//! depth and size limits): an agent reading them with any JSON parser must see one value.
//! The leak oracle also reads every string literal of the raw bytes, duplicates included.

use airlock_guard::{parse, ParseError, MAX_DEPTH_CEILING};
use serde_json::Value;
use std::borrow::Cow;

/// The largest answer the harness reads (one exec-protocol line, or an in-process
/// adapter's bytes); larger is a flood.
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// What an adapter handed the agent for one case.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Answer {
    /// The exact bytes the agent receives: judged with the strict reader, so a duplicate
    /// member, a BOM or a lone surrogate is a finding. What an adapter across a pipe
    /// gives, and what an in-process adapter should give when it hands the agent text.
    Bytes(Vec<u8>),
    /// A JSON value (a convenience: it cannot carry a duplicate member, so an adapter
    /// whose agent receives text should answer with [`Answer::Bytes`]).
    Value(Value),
}

impl From<Value> for Answer {
    fn from(value: Value) -> Self {
        Answer::Value(value)
    }
}

impl From<Vec<u8>> for Answer {
    fn from(bytes: Vec<u8>) -> Self {
        Answer::Bytes(bytes)
    }
}

impl Answer {
    /// The value an agent reads from the answer, read strictly.
    ///
    /// # Errors
    ///
    /// Why the bytes are not one unambiguous JSON value ([`AnswerReadError`], operator text).
    pub fn read(&self) -> Result<Cow<'_, Value>, AnswerReadError> {
        match self {
            Answer::Value(value) => Ok(Cow::Borrowed(value)),
            Answer::Bytes(bytes) => read_strict(bytes).map(Cow::Owned),
        }
    }

    /// The answer as a value for a report: the strict reading, else a lenient one, else
    /// the bytes as (lossy) text.
    pub fn for_report(&self) -> Value {
        match self {
            Answer::Value(value) => value.clone(),
            Answer::Bytes(bytes) => read_strict(bytes)
                .ok()
                .or_else(|| serde_json::from_slice(bytes).ok())
                .unwrap_or_else(|| {
                    let end = bytes.len().min(1024);
                    Value::String(String::from_utf8_lossy(&bytes[..end]).into_owned())
                }),
        }
    }

    /// The raw bytes the agent receives, when the adapter gave bytes.
    pub fn raw(&self) -> Option<&[u8]> {
        match self {
            Answer::Bytes(bytes) => Some(bytes),
            Answer::Value(_) => None,
        }
    }
}

/// Why an answer's bytes are not one unambiguous JSON value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerReadError {
    /// More than `MAX_ANSWER_BYTES` (1 MiB): a flood, not read.
    #[error("{len} bytes, over the {MAX_ANSWER_BYTES}-byte answer limit")]
    TooLarge {
        /// The answer's length in bytes.
        len: usize,
    },
    /// The guard's strict parser refused the bytes (what, and at which byte offset).
    #[error("{0}")]
    Parse(ParseError),
}

// The message holds the whole chain (each variant keeps its cause as data): no
// `source()`, so an error chain prints each piece once.

/// Read `bytes` as an agent would have to: the guard's strict parser, at most
/// [`MAX_ANSWER_BYTES`] and [`MAX_DEPTH_CEILING`] levels.
///
/// # Errors
///
/// Why the bytes are not one unambiguous JSON value ([`AnswerReadError`]).
pub fn read_strict(bytes: &[u8]) -> Result<Value, AnswerReadError> {
    if bytes.len() > MAX_ANSWER_BYTES {
        return Err(AnswerReadError::TooLarge { len: bytes.len() });
    }
    parse(bytes, MAX_DEPTH_CEILING).map_err(AnswerReadError::Parse)
}

/// Every string literal in `bytes` (member names and values, every duplicate), its
/// escapes decoded leniently (a lone surrogate becomes U+FFFD), lower-cased, each after a
/// `\u{1}` separator; then the bytes themselves as lossy lower-case text. Whatever JSON
/// reader an agent uses, the text it can see is in here.
pub fn raw_text(bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        let (literal, end) = string_literal(bytes, i + 1);
        out.push('\u{1}');
        out.push_str(&literal.to_lowercase());
        i = end + 1;
    }
    out.push('\u{1}');
    out.push_str(&String::from_utf8_lossy(bytes).to_lowercase());
    out
}

/// Decode the string literal whose content starts at `start`: its text and the index of
/// the closing quote (or the end of the bytes).
fn string_literal(bytes: &[u8], start: usize) -> (String, usize) {
    let mut units: Vec<u8> = Vec::new();
    let mut text = String::new();
    let mut pending_high: Option<u16> = None;
    let flush = |units: &mut Vec<u8>, text: &mut String| {
        text.push_str(&String::from_utf8_lossy(units));
        units.clear();
    };
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => break,
            b'\\' if i + 1 < bytes.len() => {
                let escaped = bytes[i + 1];
                i += 2;
                if escaped == b'u' {
                    let hex = bytes
                        .get(i..i + 4)
                        .and_then(|h| std::str::from_utf8(h).ok());
                    let Some(unit) = hex.and_then(|h| u16::from_str_radix(h, 16).ok()) else {
                        continue;
                    };
                    i += 4;
                    flush(&mut units, &mut text);
                    match (pending_high.take(), unit) {
                        (Some(high), 0xDC00..=0xDFFF) => {
                            let c = 0x10000
                                + ((u32::from(high) - 0xD800) << 10)
                                + (u32::from(unit) - 0xDC00);
                            text.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                        }
                        (high, 0xD800..=0xDBFF) => {
                            if high.is_some() {
                                text.push('\u{FFFD}');
                            }
                            pending_high = Some(unit);
                        }
                        (high, unit) => {
                            if high.is_some() {
                                text.push('\u{FFFD}');
                            }
                            text.push(char::from_u32(u32::from(unit)).unwrap_or('\u{FFFD}'));
                        }
                    }
                    continue;
                }
                if pending_high.take().is_some() {
                    text.push('\u{FFFD}');
                }
                let c = match escaped {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    other => other,
                };
                units.push(c);
            }
            other => {
                if pending_high.take().is_some() {
                    flush(&mut units, &mut text);
                    text.push('\u{FFFD}');
                }
                units.push(other);
                i += 1;
            }
        }
    }
    if pending_high.is_some() {
        text.push('\u{FFFD}');
    }
    flush(&mut units, &mut text);
    (text, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_reading_refuses_what_parsers_read_differently() {
        let duplicate =
            br#"{"error":{"code":"IGNORE ME","code":"INVALID_RESPONSE","retryable":false}}"#;
        assert!(matches!(
            read_strict(duplicate),
            Err(AnswerReadError::Parse(e)) if matches!(e.kind(), airlock_guard::ParseErrorKind::DuplicateMember(_))
        ));
        assert!(read_strict(b"\xEF\xBB\xBF{}").is_err());
        assert!(read_strict(br#"{"a":"\ud800"}"#).is_err());
        assert!(read_strict(b"{} {}").is_err());
        assert_eq!(
            read_strict(b" {\"a\" : 1}\r\n").unwrap(),
            serde_json::json!({"a": 1})
        );
    }

    #[test]
    fn raw_text_holds_every_string_literal_decoded_duplicates_included() {
        let bytes = br#"{"code":"ZQ\u0041bc\ud83d\ude00","code":"ok","x":"\ud800y"}"#;
        let text = raw_text(bytes);
        assert!(text.contains("zqabc\u{1F600}"), "{text:?}");
        assert!(text.contains("\u{1}ok"));
        assert!(text.contains("\u{FFFD}y"));
        // An unterminated string is read to the end.
        assert!(raw_text(br#"{"a":"tail"#).contains("tail"));
        // Escaped quotes do not end a literal.
        assert!(raw_text(br#"["a\"b"]"#).contains("a\"b"));
    }
}
