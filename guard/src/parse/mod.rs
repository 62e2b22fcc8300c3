//! Stage 2: the strict RFC 8259 parser. Iterative (an explicit stack, never recursion),
//! depth counted on the way in, duplicate member names rejected (in objects of up to
//! [`Object::SCAN`] members before their value is parsed, in larger ones when the object
//! closes). Integers are kept exact (or rejected past 64 bits); other numbers become the
//! nearest `f64` (or are rejected when that overflows, or underflows a non-zero to 0).
//! Every error carries the byte offset. The result is the guard's tape
//! ([`Document`]), sized before parsing from a count of the body's delimiters, so it
//! never grows by doubling (at most three times the body, see `doc`).

use serde_json::Value;

use crate::doc::{
    closed, emptied, is_escaped, name_span, payload, span, Document, Object, Tag,
    MAX_DOCUMENT_BYTES,
};
use crate::limits::MAX_DEPTH_CEILING;
use number::scan_number;

mod error;
pub(crate) mod number;

pub use error::{ParseError, ParseErrorKind};

/// A container still open while parsing.
struct Open {
    /// Its first word.
    at: u32,
    object: bool,
    /// Members (or items) complete so far.
    count: u32,
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
/// (and never deeper than [`MAX_DEPTH_CEILING`](crate::limits::MAX_DEPTH_CEILING), whatever is asked).
///
/// A top-level scalar has depth 0; `{}` has depth 1. Integers within 64 bits stay
/// integers; `-0` and numbers with a fraction or exponent become `f64`.
///
/// # Errors
///
/// A [`ParseError`] with the first violation and its byte offset (a duplicate name in an
/// object of more than sixteen members is found when the object closes). A body of
/// 512 MiB or more is refused as [`ParseErrorKind::TooLarge`].
pub fn parse(bytes: &[u8], max_depth: usize) -> Result<Value, ParseError> {
    parse_doc(bytes, max_depth).map(|doc| doc.root().to_value())
}

/// [`parse`] within a budget of values (the root, every member's value, every item):
/// a body of more than `*budget` values is refused before the `serde_json` value is
/// built, which takes up to 72 bytes a value; else `*budget` is reduced by the values
/// built, so one budget can bound several documents (the pages of a list). A reader of
/// large untrusted bodies so bounds its memory by a count as well as by the bytes (the
/// parse itself takes at most three times the body).
///
/// # Errors
///
/// As [`parse`]; [`ParseErrorKind::TooManyValues`] (at offset 0, the budget left
/// untouched) past the budget.
pub fn parse_within(
    bytes: &[u8],
    max_depth: usize,
    budget: &mut usize,
) -> Result<Value, ParseError> {
    let doc = parse_doc(bytes, max_depth)?;
    let values = doc.root().values();
    if values > *budget {
        return Err(ParseError::new(
            ParseErrorKind::TooManyValues {
                max_values: *budget,
            },
            0,
        ));
    }
    *budget -= values;
    Ok(doc.root().to_value())
}

/// [`parse`] into the guard's tape.
pub(crate) fn parse_doc(bytes: &[u8], max_depth: usize) -> Result<Document<'_>, ParseError> {
    if bytes.len() >= MAX_DOCUMENT_BYTES {
        return Err(ParseError::new(ParseErrorKind::TooLarge, 0));
    }
    let (words, decoded) = if bytes.len() <= COUNTED_FROM {
        // At most three words for each five bytes (`"\n",`, `"":0,`): a bound that costs
        // nothing to compute, and that wastes little on a small body.
        (bytes.len() / 5 * 3 + 3, 0)
    } else {
        capacity(bytes)
    };
    Parser {
        bytes,
        pos: 0,
        max_depth: max_depth.min(MAX_DEPTH_CEILING),
        words: Vec::with_capacity(words),
        decoded: String::with_capacity(decoded),
        indexed: Vec::new(),
        order: Vec::new(),
    }
    .document()
}

/// From this size (64 KiB) a body's tape is sized by counting its delimiters: below, the
/// count costs more than the memory it saves.
const COUNTED_FROM: usize = 64 * 1024;

/// An upper bound on the words of `bytes`' tape and on the unescaped text of its strings
/// with escapes, for a valid document (an invalid one fails before outgrowing it). Every
/// value or member name follows the start, `,`, `:` or the bracket of a non-empty
/// container, and takes a word; a string with escapes two more.
fn capacity(bytes: &[u8]) -> (usize, usize) {
    let (mut words, mut decoded) = (1, 0);
    let mut at = 0;
    // A `:` follows a name and precedes a value: the value's word and the name's second.
    let delimiters = |run: &[u8]| {
        memchr::memchr_iter(b',', run).count() + 2 * memchr::memchr_iter(b':', run).count()
    };
    while let Some(found) = bytes
        .get(at..)
        .and_then(|rest| memchr::memchr3(b'"', b'[', b'{', rest))
    {
        let before = &bytes[at..at + found];
        words += delimiters(before);
        at += found;
        if bytes[at] != b'"' {
            at += 1;
            let next = bytes[at..]
                .iter()
                .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
            if !matches!(next, Some(b']' | b'}')) {
                words += 1;
            }
            continue;
        }
        let start = at + 1;
        let mut end = start;
        let mut escaped = false;
        loop {
            match bytes
                .get(end..)
                .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
            {
                Some(n) if bytes[end + n] == b'\\' => {
                    escaped = true;
                    end += n + 2;
                }
                Some(n) => {
                    end += n;
                    break;
                }
                None => return (words, decoded),
            }
        }
        if escaped {
            words += 2;
            decoded += end - start;
        }
        at = end + 1;
    }
    if let Some(rest) = bytes.get(at..) {
        words += delimiters(rest);
    }
    (words, decoded)
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    max_depth: usize,
    words: Vec<u32>,
    decoded: String,
    indexed: Vec<[u32; 3]>,
    order: Vec<u32>,
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

    /// The index the next word will have.
    fn here(&self) -> u32 {
        // Below `MAX_DOCUMENT_BYTES` words: a body of that many bytes has fewer values.
        self.words.len() as u32
    }

    fn document(mut self) -> Result<Document<'a>, ParseError> {
        if self.bytes.starts_with(b"\xEF\xBB\xBF") {
            return self.err(ParseErrorKind::ByteOrderMark, 0);
        }
        self.skip_ws();
        if self.pos == self.bytes.len() {
            return self.err(ParseErrorKind::EmptyBody, self.pos);
        }
        let mut stack: Vec<Open> = Vec::new();
        'value: loop {
            self.skip_ws();
            let start = self.pos;
            match self.peek() {
                Some(open @ (b'{' | b'[')) => {
                    self.open(stack.len(), start)?;
                    let object = open == b'{';
                    let at = self.here();
                    let tag = if object { Tag::Object } else { Tag::Array };
                    self.skip_ws();
                    if self.peek() == Some(if object { b'}' } else { b']' }) {
                        self.pos += 1;
                        self.words.push(emptied(tag.word(start)));
                    } else {
                        self.words.push(tag.word(0));
                        stack.push(Open {
                            at,
                            object,
                            count: 0,
                        });
                        if object {
                            self.member_name(at, 0)?;
                        }
                        continue 'value;
                    }
                }
                Some(b'"') => self.string()?,
                Some(b't') => self.literal(b"true", Tag::True)?,
                Some(b'f') => self.literal(b"false", Tag::False)?,
                Some(b'n') => self.literal(b"null", Tag::Null)?,
                Some(b'-' | b'0'..=b'9') => {
                    self.pos = scan_number(self.bytes, start)?.1;
                    self.words.push(Tag::Number.word(start));
                }
                Some(b'/') => return self.err(ParseErrorKind::Comment, start),
                Some(b'N' | b'I') => return self.err(ParseErrorKind::NonFiniteNumber, start),
                Some(b'\'') => return self.err(ParseErrorKind::SingleQuotedString, start),
                Some(b) => return self.err(ParseErrorKind::UnexpectedByte(b), start),
                None => return self.err(ParseErrorKind::UnexpectedEnd, start),
            }
            // A value is complete: count it in the innermost open container, closing
            // containers for as long as their closing bracket follows.
            loop {
                let Some(open) = stack.last_mut() else {
                    self.skip_ws();
                    if self.pos != self.bytes.len() {
                        return self.err(ParseErrorKind::TrailingBytes, self.pos);
                    }
                    return self.finish();
                };
                open.count += 1;
                let (at, object, count) = (open.at, open.object, open.count);
                self.skip_ws();
                match (self.peek(), object) {
                    (Some(b','), _) => {
                        self.pos += 1;
                        if object {
                            self.skip_ws();
                            self.member_name(at, count)?;
                        }
                        continue 'value;
                    }
                    (Some(b']'), false) | (Some(b'}'), true) => {
                        self.pos += 1;
                        let end = self.here();
                        self.words[at as usize] = closed(self.words[at as usize], end);
                        stack.pop();
                        if object && count as usize > Object::SCAN {
                            self.index(at, count)?;
                        }
                    }
                    (other, _) => return self.unexpected(other),
                }
            }
        }
    }

    /// The document: every byte of a parsed body is UTF-8 (strings were checked, and
    /// everything else is ASCII).
    fn finish(self) -> Result<Document<'a>, ParseError> {
        let body = std::str::from_utf8(self.bytes)
            .map_err(|e| ParseError::new(ParseErrorKind::InvalidUtf8, e.valid_up_to()))?;
        Ok(Document::new(
            body,
            self.words,
            self.decoded,
            self.indexed,
            self.order,
        ))
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

    /// The name whose first word is `at`, as bytes (names are checked UTF-8 when read).
    fn name(&self, at: u32) -> &[u8] {
        let from = self.words[at as usize + 1] as usize;
        if is_escaped(&self.words, at) {
            let len = self.words[at as usize + 2] as usize;
            return &self.decoded.as_bytes()[from..from + len];
        }
        let start = payload(&self.words, at);
        &self.bytes[start..start + from]
    }

    /// A duplicate of the name at `at`, reported at `offset`.
    fn duplicate(&self, at: u32, offset: usize) -> ParseError {
        let name = String::from_utf8_lossy(self.name(at));
        ParseError::duplicate(&name, offset)
    }

    /// The byte offset of the opening quote of the string whose first word is `at`.
    fn quote(&self, at: u32) -> usize {
        payload(&self.words, at) - 1
    }

    /// The first words of the member names of the object at `object`, whose first
    /// `count` members are complete.
    fn names(&self, object: u32, count: u32) -> impl Iterator<Item = u32> + '_ {
        let mut at = object + 1;
        (0..count).map(move |_| {
            let name = at;
            at = span(&self.words, name_span(&self.words, at));
            name
        })
    }

    /// A member name and its colon, the object's `count`-th. While the object is small, a
    /// name it already has is rejected here, before its value is read.
    fn member_name(&mut self, object: u32, count: u32) -> Result<(), ParseError> {
        let start = self.pos;
        match self.peek() {
            Some(b'"') => {}
            Some(b'\'') => return self.err(ParseErrorKind::SingleQuotedString, start),
            other => return self.unexpected(other),
        }
        let at = self.here();
        self.string()?;
        if !is_escaped(&self.words, at) {
            // A name is compared as text: its UTF-8 is checked now, not with the body's.
            let name = &self.bytes[start + 1..self.pos - 1];
            if let Err(e) = std::str::from_utf8(name) {
                return self.err(ParseErrorKind::InvalidUtf8, start + 1 + e.valid_up_to());
            }
            // Below `MAX_DOCUMENT_BYTES`.
            self.words.push(name.len() as u32);
        }
        if (count as usize) < Object::SCAN {
            let name = self.name(at);
            if self
                .names(object, count)
                .any(|other| self.name(other) == name)
            {
                return Err(self.duplicate(at, start));
            }
        }
        self.skip_ws();
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                Ok(())
            }
            other => self.unexpected(other),
        }
    }

    /// Index a closed object of more than [`Object::SCAN`] members: its names sorted,
    /// which also finds a duplicate (reported at its second occurrence, the earliest such
    /// in the document).
    fn index(&mut self, object: u32, count: u32) -> Result<(), ParseError> {
        let start = self.order.len();
        let names: Vec<u32> = self.names(object, count).collect();
        let mut sorted = names;
        // Byte order is `str` order.
        sorted.sort_unstable_by(|&a, &b| self.name(a).cmp(self.name(b)).then(a.cmp(&b)));
        let duplicate = sorted
            .windows(2)
            .filter(|pair| self.name(pair[0]) == self.name(pair[1]))
            .map(|pair| pair[1])
            .min();
        if let Some(at) = duplicate {
            return Err(self.duplicate(at, self.quote(at)));
        }
        self.order.extend_from_slice(&sorted);
        // Below `MAX_DOCUMENT_BYTES` (see `here`).
        self.indexed.push([object, start as u32, count]);
        Ok(())
    }

    fn literal(&mut self, word: &[u8], tag: Tag) -> Result<(), ParseError> {
        let end = self.pos + word.len();
        if self.bytes.get(self.pos..end) == Some(word) {
            self.words.push(tag.word(self.pos));
            self.pos = end;
            return Ok(());
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

    /// A string starting at the opening quote, as its words; the cursor ends after the
    /// closing quote.
    fn string(&mut self) -> Result<(), ParseError> {
        self.pos += 1;
        let start = self.pos;
        // Fast path: no escape before the closing quote.
        if let Some(len) = plain_run(&self.bytes[start..]) {
            if self.bytes[start + len] == b'"' {
                // Its UTF-8 is checked with the whole body's, when the document is done.
                self.pos = start + len + 1;
                self.words.push(Tag::Plain.word(start));
                return Ok(());
            }
        }
        let from = self.decoded.len();
        loop {
            let run_start = self.pos;
            self.pos =
                plain_run(&self.bytes[run_start..]).map_or(self.bytes.len(), |len| run_start + len);
            let run = &self.bytes[run_start..self.pos];
            match std::str::from_utf8(run) {
                Ok(text) => self.decoded.push_str(text),
                Err(e) => {
                    return self.err(ParseErrorKind::InvalidUtf8, run_start + e.valid_up_to())
                }
            }
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    let len = self.decoded.len() - from;
                    // Offsets into the unescaped text are below the body's length.
                    self.words
                        .extend([Tag::Escaped.word(start), from as u32, len as u32]);
                    return Ok(());
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
                        self.decoded.push(c);
                        return Ok(());
                    }
                    None => return self.err(ParseErrorKind::LoneSurrogate, start),
                }
            }
            Some(_) => return self.err(ParseErrorKind::InvalidEscape, start),
            None => return self.err(ParseErrorKind::UnexpectedEnd, self.pos),
        };
        self.pos += 1;
        self.decoded.push(c);
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
}

#[cfg(test)]
mod tests;
