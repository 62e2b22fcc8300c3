//! What a validation error shows of a value: an excerpt read from the raw body, built
//! only when the error is read, so no rejection copies a large value.

use serde_json::{Map, Value};

use super::number;

/// What a validator's error shows of a value: about this many bytes (messages are cut at
/// [`crate::audit::MAX_TEXT_BYTES`]).
pub(super) const EXCERPT_BYTES: usize = 2 * crate::audit::MAX_TEXT_BYTES;

/// The value starting at byte `start` of `body` (a document the parser accepted), cut to
/// about [`EXCERPT_BYTES`]: whole when it is that small, else its first members, items
/// and characters. Reads only the bytes it shows.
pub(super) fn excerpt(body: &[u8], start: u32) -> Value {
    let mut reader = Excerpt {
        body,
        pos: start as usize,
        budget: EXCERPT_BYTES,
    };
    reader.value()
}

struct Excerpt<'a> {
    body: &'a [u8],
    pos: usize,
    budget: usize,
}

impl Excerpt<'_> {
    fn peek(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.body.get(self.pos) {
            self.pos += 1;
        }
        self.body.get(self.pos).copied()
    }

    fn spend(&mut self, n: usize) {
        self.budget = self.budget.saturating_sub(n);
    }

    fn value(&mut self) -> Value {
        match self.peek() {
            Some(b'{') => {
                self.pos += 1;
                self.spend(2);
                let mut members = Map::new();
                while self.budget > 0 {
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'"') => {
                            let name = self.string();
                            let _colon = self.peek();
                            self.pos += 1;
                            if self.budget == 0 {
                                break;
                            }
                            let value = self.value();
                            members.insert(name, value);
                        }
                        Some(b'}') => {
                            self.pos += 1;
                            break;
                        }
                        _ => break,
                    }
                }
                Value::Object(members)
            }
            Some(b'[') => {
                self.pos += 1;
                self.spend(2);
                let mut items = Vec::new();
                while self.budget > 0 {
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            break;
                        }
                        None => break,
                        Some(_) => items.push(self.value()),
                    }
                }
                Value::Array(items)
            }
            Some(b'"') => Value::String(self.string()),
            Some(b't') => self.literal(4, Value::Bool(true)),
            Some(b'f') => self.literal(5, Value::Bool(false)),
            Some(b'n') => self.literal(4, Value::Null),
            _ => {
                let rest = &self.body[self.pos..];
                let len = rest
                    .iter()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .unwrap_or(rest.len());
                self.pos += len;
                // Nothing read (never, in a parsed body): stop rather than loop.
                self.spend(if len == 0 { usize::MAX } else { len });
                let text = std::str::from_utf8(&rest[..len]).unwrap_or_default();
                Value::Number(number(text))
            }
        }
    }

    fn literal(&mut self, len: usize, value: Value) -> Value {
        self.pos += len;
        self.spend(len);
        value
    }

    /// The string at the opening quote, unescaped, cut to the budget.
    fn string(&mut self) -> String {
        self.pos += 1;
        self.spend(2);
        let mut out = String::new();
        while let Some(&b) = self.body.get(self.pos) {
            if out.len() >= self.budget {
                // Cut: nothing after this is read.
                let mut end = self.budget;
                while !out.is_char_boundary(end) {
                    end -= 1;
                }
                out.truncate(end);
                self.budget = 0;
                return out;
            }
            match b {
                b'"' => {
                    self.pos += 1;
                    break;
                }
                b'\\' => {
                    let (c, len) = unescape(&self.body[self.pos..]);
                    out.push(c);
                    self.pos += len;
                }
                _ => {
                    let rest = &self.body[self.pos..];
                    let len = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
                    let room = (self.budget - out.len() + 4).min(len);
                    let run = match std::str::from_utf8(&rest[..room]) {
                        Ok(run) => run,
                        Err(e) => std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap_or_default(),
                    };
                    if run.is_empty() {
                        break;
                    }
                    out.push_str(run);
                    self.pos += run.len();
                }
            }
        }
        self.spend(out.len());
        out
    }
}

/// The character of the escape at the start of `raw` (valid: the parser accepted it) and
/// the escape's length in bytes.
fn unescape(raw: &[u8]) -> (char, usize) {
    let hex = |at: usize| {
        raw.get(at..at + 4)
            .and_then(|digits| std::str::from_utf8(digits).ok())
            .and_then(|digits| u32::from_str_radix(digits, 16).ok())
            .unwrap_or(0xFFFD)
    };
    match raw.get(1) {
        Some(b'n') => ('\n', 2),
        Some(b't') => ('\t', 2),
        Some(b'r') => ('\r', 2),
        Some(b'b') => ('\u{8}', 2),
        Some(b'f') => ('\u{c}', 2),
        Some(b'u') => {
            let unit = hex(2);
            if (0xD800..0xDC00).contains(&unit) {
                let low = hex(8);
                let code = 0x10000 + ((unit - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF);
                (char::from_u32(code).unwrap_or('\u{FFFD}'), 12)
            } else {
                (char::from_u32(unit).unwrap_or('\u{FFFD}'), 6)
            }
        }
        Some(&other) => (char::from(other), 2),
        None => ('\u{FFFD}', 1),
    }
}
