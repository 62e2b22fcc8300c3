//! Stage 2: the strict RFC 8259 parser. Iterative (an explicit stack, never recursion),
//! depth counted on the way in, duplicate member names rejected before their value is
//! parsed. Integers are kept exact (or rejected past 64 bits); other numbers become the
//! nearest `f64` (or are rejected when that overflows, or underflows a non-zero to 0).
//! Every error carries the byte offset.

use serde_json::{Number, Value};
use std::borrow::Cow;
use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};

use crate::doc::{Node, Object};
use crate::limits::MAX_DEPTH_CEILING;

mod error;

pub use error::{ParseError, ParseErrorKind};

/// The containers still open while parsing.
enum Frame<'a> {
    Array(Vec<Node<'a>>),
    Object(Members<'a>),
}

/// The members of an open object, in order, with the name whose value is being parsed.
/// Kept as a vector that becomes the document's object when it closes (no hashing);
/// duplicates are found by a scan while small and through a keyed set of name hashes past
/// [`Members::SCAN`] members.
struct Members<'a> {
    done: Vec<(Cow<'a, str>, Node<'a>)>,
    pending: Cow<'a, str>,
    /// Past [`Members::SCAN`] names: a keyed (per-process random) hash of each, so no
    /// input can be crafted to collide and make the check quadratic.
    hashes: Option<(RandomState, HashSet<u64>)>,
}

impl<'a> Members<'a> {
    const SCAN: usize = 16;

    fn new(done: Vec<(Cow<'a, str>, Node<'a>)>) -> Self {
        Self {
            done,
            pending: Cow::Borrowed(""),
            hashes: None,
        }
    }

    fn contains(&mut self, name: &str) -> bool {
        if self.done.len() < Self::SCAN {
            return self.done.iter().any(|(k, _)| k == name);
        }
        let (keys, hashes) = self.hashes.get_or_insert_with(|| {
            let keys = RandomState::new();
            let hashes = self.done.iter().map(|(k, _)| keys.hash_one(k)).collect();
            (keys, hashes)
        });
        // A hash hit is confirmed by a scan, so collisions cost time, never correctness.
        hashes.contains(&keys.hash_one(name)) && self.done.iter().any(|(k, _)| k == name)
    }

    fn push(&mut self, value: Node<'a>) {
        let name = std::mem::take(&mut self.pending);
        if let Some((keys, hashes)) = &mut self.hashes {
            hashes.insert(keys.hash_one(&name));
        }
        self.done.push((name, value));
    }

    /// The object, and the emptied vector for reuse.
    fn finish(mut self) -> (Node<'a>, Vec<(Cow<'a, str>, Node<'a>)>) {
        let members = self.done.drain(..).collect();
        (Node::Object(Object::new(members)), self.done)
    }
}

/// The length of the leading run of `bytes` that needs no attention inside a string (no
/// quote, backslash or control character), or `None` when the input ends first. Eight
/// bytes at a time, as serde_json does.
fn plain_run(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let quote = x ^ (ONES * u64::from(b'"'));
        let backslash = x ^ (ONES * u64::from(b'\\'));
        // The lowest flagged byte is exact (the borrow only flags bytes above it).
        let flagged = (x.wrapping_sub(ONES * 0x20) & !x)
            | (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash);
        let flagged = flagged & HIGH;
        if flagged != 0 {
            return Some(at + (flagged.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|len| at + len)
}

/// Parse `bytes` as one strict JSON document nested at most `max_depth` containers deep
/// (and never deeper than [`MAX_DEPTH_CEILING`](crate::MAX_DEPTH_CEILING), whatever is asked).
///
/// A top-level scalar has depth 0; `{}` has depth 1. Integers within 64 bits stay
/// integers; `-0` and numbers with a fraction or exponent become `f64`.
///
/// # Errors
///
/// A [`ParseError`] with the first violation and its byte offset.
pub fn parse(bytes: &[u8], max_depth: usize) -> Result<Value, ParseError> {
    parse_doc(bytes, max_depth).map(Node::into_value)
}

/// [`parse`] into the guard's borrowed document.
pub(crate) fn parse_doc(bytes: &[u8], max_depth: usize) -> Result<Node<'_>, ParseError> {
    Parser {
        bytes,
        pos: 0,
        max_depth: max_depth.min(MAX_DEPTH_CEILING),
        scratch: String::new(),
        spare: Vec::new(),
    }
    .document()
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    max_depth: usize,
    scratch: String,
    /// Emptied member vectors of closed objects, reused for the next object.
    spare: Vec<Vec<(Cow<'a, str>, Node<'a>)>>,
}

impl<'a> Parser<'a> {
    fn err<T>(&self, kind: ParseErrorKind, offset: usize) -> Result<T, ParseError> {
        Err(ParseError::new(kind, offset))
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn document(mut self) -> Result<Node<'a>, ParseError> {
        if self.bytes.starts_with(b"\xEF\xBB\xBF") {
            return self.err(ParseErrorKind::ByteOrderMark, 0);
        }
        self.skip_ws();
        if self.pos == self.bytes.len() {
            return self.err(ParseErrorKind::EmptyBody, self.pos);
        }
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            self.skip_ws();
            let start = self.pos;
            let mut value = match self.peek() {
                Some(b'{') => {
                    self.open(stack.len(), start)?;
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        Node::Object(Object::new(Vec::new()))
                    } else {
                        let mut members = Members::new(self.spare.pop().unwrap_or_default());
                        members.pending = self.member_name(&mut members)?;
                        stack.push(Frame::Object(members));
                        continue 'value;
                    }
                }
                Some(b'[') => {
                    self.open(stack.len(), start)?;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        Node::Array(Vec::new())
                    } else {
                        stack.push(Frame::Array(Vec::new()));
                        continue 'value;
                    }
                }
                Some(b'"') => Node::String(self.string()?),
                Some(b't') => self.literal(b"true", Node::Bool(true))?,
                Some(b'f') => self.literal(b"false", Node::Bool(false))?,
                Some(b'n') => self.literal(b"null", Node::Null)?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b'/') => return self.err(ParseErrorKind::Comment, start),
                Some(b'N' | b'I') => return self.err(ParseErrorKind::NonFiniteNumber, start),
                Some(b'\'') => return self.err(ParseErrorKind::SingleQuotedString, start),
                Some(b) => return self.err(ParseErrorKind::UnexpectedByte(b), start),
                None => return self.err(ParseErrorKind::UnexpectedEnd, start),
            };
            // A value is complete: hand it to the innermost open container, closing
            // containers for as long as their closing bracket follows.
            loop {
                match stack.last_mut() {
                    None => {
                        self.skip_ws();
                        if self.pos != self.bytes.len() {
                            return self.err(ParseErrorKind::TrailingBytes, self.pos);
                        }
                        return Ok(value);
                    }
                    Some(Frame::Array(items)) => {
                        items.push(value);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                continue 'value;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                let Some(Frame::Array(items)) = stack.pop() else {
                                    unreachable!("the top frame was just matched as an array")
                                };
                                value = Node::Array(items);
                            }
                            other => return self.unexpected(other),
                        }
                    }
                    Some(Frame::Object(members)) => {
                        members.push(value);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                members.pending = self.member_name(members)?;
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                let Some(Frame::Object(members)) = stack.pop() else {
                                    unreachable!("the top frame was just matched as an object")
                                };
                                let (object, spare) = members.finish();
                                self.spare.push(spare);
                                value = object;
                            }
                            other => return self.unexpected(other),
                        }
                    }
                }
            }
        }
    }

    fn unexpected<T>(&self, byte: Option<u8>) -> Result<T, ParseError> {
        match byte {
            Some(b'/') => self.err(ParseErrorKind::Comment, self.pos),
            Some(b) => self.err(ParseErrorKind::UnexpectedByte(b), self.pos),
            None => self.err(ParseErrorKind::UnexpectedEnd, self.pos),
        }
    }

    /// Enter a container at `open` frames deep, refusing to exceed the depth limit.
    fn open(&mut self, open: usize, start: usize) -> Result<(), ParseError> {
        if open + 1 > self.max_depth {
            return self.err(
                ParseErrorKind::TooDeep {
                    max_depth: self.max_depth,
                },
                start,
            );
        }
        self.pos += 1;
        Ok(())
    }

    /// A member name and its colon; a name already in `map` is rejected here, before its
    /// value is read.
    fn member_name(&mut self, members: &mut Members<'a>) -> Result<Cow<'a, str>, ParseError> {
        let start = self.pos;
        match self.peek() {
            Some(b'"') => {}
            Some(b'\'') => return self.err(ParseErrorKind::SingleQuotedString, start),
            other => return self.unexpected(other),
        }
        let name = self.string()?;
        if members.contains(&name) {
            return self.err(ParseErrorKind::DuplicateMember(name.into_owned()), start);
        }
        self.skip_ws();
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                Ok(name)
            }
            other => self.unexpected(other),
        }
    }

    fn literal(&mut self, word: &[u8], value: Node<'a>) -> Result<Node<'a>, ParseError> {
        let end = self.pos + word.len();
        if self.bytes.get(self.pos..end) == Some(word) {
            self.pos = end;
            return Ok(value);
        }
        // Report the first byte that differs.
        let mut at = self.pos;
        while at < end && self.bytes.get(at) == word.get(at - self.pos) {
            at += 1;
        }
        match self.bytes.get(at) {
            Some(&b) => self.err(ParseErrorKind::UnexpectedByte(b), at),
            None => self.err(ParseErrorKind::UnexpectedEnd, at),
        }
    }

    /// A string starting at the opening quote; the cursor ends after the closing quote.
    fn string(&mut self) -> Result<Cow<'a, str>, ParseError> {
        self.pos += 1;
        self.scratch.clear();
        // Fast path: no escape before the closing quote.
        let start = self.pos;
        if let Some(len) = plain_run(&self.bytes[start..]) {
            if self.bytes[start + len] == b'"' {
                let bytes: &'a [u8] = self.bytes;
                return match std::str::from_utf8(&bytes[start..start + len]) {
                    Ok(text) => {
                        self.pos = start + len + 1;
                        Ok(Cow::Borrowed(text))
                    }
                    Err(e) => self.err(ParseErrorKind::InvalidUtf8, start + e.valid_up_to()),
                };
            }
        }
        loop {
            let run_start = self.pos;
            self.pos =
                plain_run(&self.bytes[run_start..]).map_or(self.bytes.len(), |len| run_start + len);
            let run = &self.bytes[run_start..self.pos];
            match std::str::from_utf8(run) {
                Ok(text) => self.scratch.push_str(text),
                Err(e) => {
                    return self.err(ParseErrorKind::InvalidUtf8, run_start + e.valid_up_to())
                }
            }
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Cow::Owned(std::mem::take(&mut self.scratch)));
                }
                Some(b'\\') => self.escape()?,
                Some(_) => return self.err(ParseErrorKind::ControlCharacterInString, self.pos),
                None => return self.err(ParseErrorKind::UnexpectedEnd, self.pos),
            }
        }
    }

    /// One escape sequence starting at the backslash.
    fn escape(&mut self) -> Result<(), ParseError> {
        let start = self.pos;
        self.pos += 1;
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                let unit = self.hex4()?;
                let c = match unit {
                    0xD800..=0xDBFF => {
                        if self.bytes.get(self.pos..self.pos + 2) != Some(b"\\u") {
                            return self.err(ParseErrorKind::LoneSurrogate, start);
                        }
                        self.pos += 2;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return self.err(ParseErrorKind::LoneSurrogate, start);
                        }
                        let code = 0x10000
                            + ((u32::from(unit) - 0xD800) << 10)
                            + (u32::from(low) - 0xDC00);
                        char::from_u32(code)
                    }
                    0xDC00..=0xDFFF => None,
                    _ => char::from_u32(u32::from(unit)),
                };
                match c {
                    Some(c) => {
                        self.scratch.push(c);
                        return Ok(());
                    }
                    None => return self.err(ParseErrorKind::LoneSurrogate, start),
                }
            }
            Some(_) => return self.err(ParseErrorKind::InvalidEscape, start),
            None => return self.err(ParseErrorKind::UnexpectedEnd, self.pos),
        };
        self.pos += 1;
        self.scratch.push(c);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u16, ParseError> {
        let mut unit: u16 = 0;
        for _ in 0..4 {
            let digit = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                Some(_) => return self.err(ParseErrorKind::InvalidEscape, self.pos),
                None => return self.err(ParseErrorKind::UnexpectedEnd, self.pos),
            };
            unit = unit * 16 + u16::from(digit);
            self.pos += 1;
        }
        Ok(unit)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Node<'a>, ParseError> {
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
            if self.peek() == Some(b'I') {
                return self.err(ParseErrorKind::NonFiniteNumber, start);
            }
        }
        let int_start = self.pos;
        match self.digits() {
            0 => return self.number_error(start),
            n if n > 1 && self.bytes[int_start] == b'0' => {
                return self.err(ParseErrorKind::InvalidNumber, start)
            }
            _ => {}
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            integral = false;
            if self.digits() == 0 {
                return self.number_error(start);
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            integral = false;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return self.number_error(start);
            }
        }
        // Every byte of a number is ASCII, so this slice is valid UTF-8.
        let text = std::str::from_utf8(&self.bytes[start..self.pos])
            .map_err(|_| ParseError::new(ParseErrorKind::InvalidNumber, start))?;
        if integral {
            let parsed = if negative {
                text.parse::<i64>().ok().map(Number::from)
            } else {
                text.parse::<u64>().ok().map(Number::from)
            };
            return match parsed {
                // `-0` is kept as the float serde_json makes of it.
                Some(n) if negative && n.as_i64() == Some(0) => match Number::from_f64(-0.0) {
                    Some(zero) => Ok(Node::Number(zero)),
                    None => self.err(ParseErrorKind::InvalidNumber, start),
                },
                Some(n) => Ok(Node::Number(n)),
                None => self.err(ParseErrorKind::IntegerOutOfRange, start),
            };
        }
        let float: f64 = text
            .parse()
            .map_err(|_| ParseError::new(ParseErrorKind::InvalidNumber, start))?;
        if float.is_infinite() {
            return self.err(ParseErrorKind::NumberOverflow, start);
        }
        if float == 0.0 && mantissa_has_nonzero_digit(text) {
            return self.err(ParseErrorKind::NumberUnderflow, start);
        }
        match Number::from_f64(float) {
            Some(n) => Ok(Node::Number(n)),
            None => self.err(ParseErrorKind::NumberOverflow, start),
        }
    }

    fn number_error<T>(&self, start: usize) -> Result<T, ParseError> {
        match self.peek() {
            None => self.err(ParseErrorKind::UnexpectedEnd, self.pos),
            Some(b'I' | b'N') => self.err(ParseErrorKind::NonFiniteNumber, start),
            Some(_) => self.err(ParseErrorKind::InvalidNumber, start),
        }
    }
}

fn mantissa_has_nonzero_digit(text: &str) -> bool {
    text.bytes()
        .take_while(|b| !matches!(b, b'e' | b'E'))
        .any(|b| matches!(b, b'1'..=b'9'))
}

#[cfg(test)]
mod tests;
