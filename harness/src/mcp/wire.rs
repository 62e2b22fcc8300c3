//! Newline-delimited JSON-RPC on a byte stream: lines read under a bound (an over-long line
//! is skipped to its newline, never stored whole), and a scan of a message's top-level
//! members that needs no parse of the whole message (no recursion, no allocation per value).

use serde_json::Value;
use std::io::{self, BufRead};

/// How reading a line ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Line {
    /// A whole line is in the buffer (its `\n` consumed, not stored).
    Complete,
    /// The buffer reached the limit before a `\n`: the rest of the line is unread.
    TooLong,
    /// The stream ended; the buffer holds what came after the last `\n` (maybe nothing).
    Eof,
}

/// Append the rest of the current line to `buf`, without its `\n`, until `buf` holds
/// `limit` bytes: nothing past the limit is read.
///
/// # Errors
///
/// The reader's, other than `Interrupted`.
pub(crate) fn read_line_onto(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Line> {
    loop {
        if buf.len() >= limit {
            return Ok(Line::TooLong);
        }
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(Line::Eof);
        }
        let room = limit - buf.len();
        let window = &available[..available.len().min(room)];
        if let Some(newline) = window.iter().position(|&b| b == b'\n') {
            buf.extend_from_slice(&window[..newline]);
            reader.consume(newline + 1);
            return Ok(Line::Complete);
        }
        let taken = window.len();
        buf.extend_from_slice(window);
        reader.consume(taken);
    }
}

/// Consume the rest of the current line, storing nothing; `false` when the stream ended
/// before a `\n`.
///
/// # Errors
///
/// The reader's, other than `Interrupted`.
pub(crate) fn skip_line(reader: &mut impl BufRead) -> io::Result<bool> {
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(false);
        }
        if let Some(newline) = available.iter().position(|&b| b == b'\n') {
            reader.consume(newline + 1);
            return Ok(true);
        }
        let len = available.len();
        reader.consume(len);
    }
}

/// What a message's top-level members say about its routing, from as many bytes as there
/// are (a prefix of an over-long line is scanned as far as it goes).
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Members {
    /// The first `id` member's value, when it is a string, a number or `null`.
    pub(crate) id: Option<Value>,
    /// More than one `id` member, or an `id` that is an array or object.
    pub(crate) bad_id: bool,
    /// A `method` member (a request or a notification).
    pub(crate) method: bool,
    /// A `result` or `error` member (a response).
    pub(crate) answer: bool,
    /// The scan reached the closing `}` of the object.
    pub(crate) complete: bool,
}

/// Scan the top-level members of the JSON object at the start of `bytes`. Stops (with
/// what it found so far) at the end of the bytes or at anything that is not JSON; the
/// caller validates whole messages separately.
pub(crate) fn scan(bytes: &[u8]) -> Members {
    let mut members = Members::default();
    let mut at = skip_ws(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return members;
    }
    at += 1;
    loop {
        at = skip_ws(bytes, at);
        match bytes.get(at) {
            Some(b'}') => {
                members.complete = true;
                return members;
            }
            Some(b',') => {
                at += 1;
                continue;
            }
            Some(b'"') => {}
            _ => return members,
        }
        let Some(key_end) = string_end(bytes, at) else {
            return members;
        };
        let raw_key = &bytes[at..key_end];
        let key: std::borrow::Cow<'_, str> = if raw_key.contains(&b'\\') {
            match serde_json::from_slice::<String>(raw_key) {
                Ok(key) => key.into(),
                Err(_) => return members,
            }
        } else {
            match std::str::from_utf8(&raw_key[1..raw_key.len() - 1]) {
                Ok(key) => key.into(),
                Err(_) => return members,
            }
        };
        at = skip_ws(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return members;
        }
        at = skip_ws(bytes, at + 1);
        match &*key {
            "method" => members.method = true,
            "result" | "error" => members.answer = true,
            _ => {}
        }
        let start = at;
        let Some(end) = value_end(bytes, at) else {
            return members;
        };
        if key == "id" {
            if members.id.is_some() || members.bad_id {
                members.bad_id = true;
            } else {
                match serde_json::from_slice::<Value>(&bytes[start..end]) {
                    Ok(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => {
                        members.id = Some(id);
                    }
                    _ => members.bad_id = true,
                }
            }
        }
        at = end;
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\r' | b'\n')) {
        at += 1;
    }
    at
}

/// The index just past the string that opens at `at` (a `"`), or `None` if it does not end
/// within the bytes.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The index just past the value that starts at `at`; nesting is counted, not recursed.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let len = bytes[at..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))?;
            Some(at + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scan_finds_the_id_of_a_response_before_its_result() {
        let m =
            scan(br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"x\"}"#);
        assert_eq!(m.id, Some(json!(3)));
        assert!(m.answer && !m.method && !m.complete && !m.bad_id);
    }

    #[test]
    fn scan_sees_ids_after_nested_values_and_escaped_key_spellings() {
        let m = scan(br#" { "result" : {"a":[1,{"id":9}],"b":"}"} , "\u0069d" : "x-1" } "#);
        assert_eq!(m.id, Some(json!("x-1")));
        assert!(m.complete);
    }

    #[test]
    fn scan_flags_a_repeated_or_structured_id() {
        assert!(scan(br#"{"id":1,"result":{},"id":2}"#).bad_id);
        assert!(scan(br#"{"id":[1],"result":{}}"#).bad_id);
        assert!(scan(br#"{"id":1,"method":"x","result":{}}"#).method);
    }

    #[test]
    fn a_line_over_the_limit_is_cut_at_the_limit_and_skipped_to_its_newline() {
        let text = b"0123456789\nnext\n";
        let mut reader = io::BufReader::with_capacity(4, &text[..]);
        let mut buf = Vec::new();
        assert_eq!(
            read_line_onto(&mut reader, &mut buf, 5).unwrap(),
            Line::TooLong
        );
        assert_eq!(buf, b"01234");
        assert!(skip_line(&mut reader).unwrap());
        buf.clear();
        assert_eq!(
            read_line_onto(&mut reader, &mut buf, 5).unwrap(),
            Line::Complete
        );
        assert_eq!(buf, b"next");
        buf.clear();
        assert_eq!(read_line_onto(&mut reader, &mut buf, 5).unwrap(), Line::Eof);
        assert!(buf.is_empty());
    }
}
