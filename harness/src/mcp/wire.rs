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
    skip_line_with(reader, |_| {})
}

/// Consume the rest of the current line, handing each piece of it to `seen`, storing
/// nothing; `false` when the stream ended before a `\n`.
fn skip_line_with(reader: &mut impl BufRead, mut seen: impl FnMut(&[u8])) -> io::Result<bool> {
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
            seen(&available[..newline]);
            reader.consume(newline + 1);
            return Ok(true);
        }
        seen(available);
        let len = available.len();
        reader.consume(len);
    }
}

/// What a message's top-level members say about its routing, from as many bytes as there
/// are (a prefix of an over-long line is scanned as far as it goes).
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Routing {
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
pub(crate) fn scan(bytes: &[u8]) -> Routing {
    let mut members = Routing::default();
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

/// [`scan`] over a line that is never held whole: bytes are fed as they are read (the
/// prefix that was stored, then the rest while it is skipped), and only what routing
/// needs is kept — the nesting depth, string state, the current top-level key (at most
/// [`MAX_KEY`] bytes) and the `id` value's text (at most [`MAX_ID`] bytes).
#[derive(Debug, Default)]
pub(crate) struct StreamScan {
    members: Routing,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At depth 1, a key comes next (after `{` or `,`).
    expect_key: bool,
    /// The raw bytes of the top-level key being read (with its quotes).
    key: Option<Vec<u8>>,
    /// The raw text of the top-level `id` value being read.
    id: Option<Vec<u8>>,
    /// Not an object, or broken: nothing more is learned.
    stopped: bool,
}

/// Longest top-level key kept (the routing keys are short; a longer one is none of them).
const MAX_KEY: usize = 64;
/// Longest `id` value kept: a longer one is not an id the proxy issued or forwarded.
const MAX_ID: usize = 256;

impl StreamScan {
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.stopped {
                return;
            }
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if let Some(id) = &mut self.id {
            // Reading the top-level `id` value: a string up to its quote, a scalar up to
            // the `,` or `}` that ends it.
            let in_string_value = id.first() == Some(&b'"');
            // (A string value's first byte, its opening quote, is pushed before this is
            // read: any unescaped quote after it closes it, `""` included.)
            let ends = if in_string_value {
                b == b'"' && !self.escaped
            } else {
                matches!(b, b',' | b'}' | b' ' | b'\t' | b'\r' | b'\n') && !id.is_empty()
            };
            if in_string_value && ends {
                id.push(b);
                self.finish_id();
                return;
            }
            if !in_string_value && ends {
                self.finish_id();
                // The byte that ended a scalar is structural: read it as such.
            } else {
                if id.is_empty() && matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
                    return;
                }
                if id.is_empty() && matches!(b, b'{' | b'[') {
                    self.members.bad_id = true;
                    self.id = None;
                    // A structured id: fall through to track its nesting.
                } else {
                    self.escaped = in_string_value && b == b'\\' && !self.escaped;
                    id.push(b);
                    if id.len() > MAX_ID {
                        self.members.bad_id = true;
                        self.id = None;
                        self.in_string = in_string_value;
                    }
                    return;
                }
            }
        }
        if self.in_string {
            if let Some(key) = &mut self.key {
                if key.len() <= MAX_KEY {
                    key.push(b);
                }
            }
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            return;
        }
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.key = Some(vec![b'"']);
                    self.expect_key = false;
                }
            }
            b':' if self.depth == 1 => {
                let key = self.key.take().and_then(|raw| {
                    (raw.len() <= MAX_KEY)
                        .then(|| serde_json::from_slice::<String>(&raw).ok())
                        .flatten()
                });
                match key.as_deref() {
                    Some("method") => self.members.method = true,
                    Some("result" | "error") => self.members.answer = true,
                    Some("id") => {
                        if self.members.id.is_some() || self.members.bad_id {
                            self.members.bad_id = true;
                        } else {
                            self.id = Some(Vec::new());
                        }
                    }
                    _ => {}
                }
            }
            b'{' | b'[' => {
                if self.depth == 0 && b != b'{' {
                    self.stopped = true;
                    return;
                }
                self.depth += 1;
                if self.depth == 1 {
                    self.expect_key = true;
                }
            }
            b'}' | b']' => {
                if self.depth == 0 {
                    self.stopped = true;
                    return;
                }
                self.depth -= 1;
                if self.depth == 0 {
                    self.members.complete = true;
                    self.stopped = true;
                }
            }
            b',' if self.depth == 1 => self.expect_key = true,
            _ if self.depth == 0 => self.stopped = true,
            _ => {}
        }
    }

    fn finish_id(&mut self) {
        if let Some(raw) = self.id.take() {
            match serde_json::from_slice::<Value>(&raw) {
                Ok(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => {
                    self.members.id = Some(id);
                }
                _ => self.members.bad_id = true,
            }
        }
    }

    /// What the bytes fed so far say (an `id` value cut off by the end of the bytes is
    /// none, as for [`scan`]).
    pub(crate) fn members(self) -> Routing {
        self.members
    }
}

/// [`skip_line`], feeding what it skips to `scan`.
///
/// # Errors
///
/// The reader's, other than `Interrupted`.
pub(crate) fn skip_line_scanning(
    reader: &mut impl BufRead,
    scan: &mut StreamScan,
) -> io::Result<bool> {
    skip_line_with(reader, |piece| scan.feed(piece))
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

    /// The streaming scan agrees with the scan of whole bytes, fed in pieces of any size.
    #[test]
    fn the_streaming_scan_finds_what_the_whole_scan_finds() {
        let cases: [&[u8]; 13] = [
            br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"x"}"}]}}"#,
            br#" { "result" : {"a":[1,{"id":9}],"b":"}"} , "id" : "x-1" } "#,
            br#"{"result":{"big":"aaaaaaaaaa","n":[1,2,{"id":4}]},"jsonrpc":"2.0","id":7}"#,
            br#"{"result":{},"id":"a"b"}"#,
            br#"{"id":1,"result":{},"id":2}"#,
            br#"{"id":[1],"result":{}}"#,
            br#"{"params":{"id":5},"method":"notifications/progress"}"#,
            br#"{"id" : -1.5e3 , "error":{"code":1}}"#,
            br#"{"id":null,"error":{}}"#,
            br#"{"id":"","method":"x"}"#,
            br#"{"result":{},"id":"","jsonrpc":"2.0"}"#,
            br#"{"id":5"#,
            br#"{"id":"a"#,
        ];
        for bytes in cases {
            let whole = scan(bytes);
            for piece in [1, 2, 3, 7, bytes.len()] {
                let mut streaming = StreamScan::default();
                for chunk in bytes.chunks(piece) {
                    streaming.feed(chunk);
                }
                assert_eq!(
                    streaming.members(),
                    whole,
                    "{} in pieces of {piece}",
                    String::from_utf8_lossy(bytes)
                );
            }
        }
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
