//! The parsed response as the guard judges it: a tape of 32-bit words over the raw body.
//! A scalar is one word (its kind and the byte offset of its text), a container one (its
//! kind and the index of the word after its last descendant), a member name two (the
//! second is its length: names are compared often), a string with escapes three (its
//! unescaped text lives in one shared buffer). Strings without escapes and numbers
//! are read from the body when asked for; nothing is allocated per value, so a parsed
//! document costs at most three times its body's size whatever its shape (2.8× for
//! `["\n","\n",…]`, three words and the unescaped text per five bytes; 2× for `[0,0,…]`). The schema validator reads it in place through
//! `jsonschema`'s custom-representation traits; only the agent fields are ever turned into
//! owned `serde_json` values, at projection.
//!
//! `schema` holds the validator's view of the tape (and JSON Schema's equality), `excerpt`
//! what an error shows of a value.

use jsonschema::JsonType;
use serde_json::{Number, Value};
use std::fmt::{self, Write as _};
use std::hash::{BuildHasher, Hash, Hasher, RandomState};

use crate::pointer::{array_index, Pointer};

mod excerpt;
mod schema;
#[cfg(test)]
mod tests;

pub(crate) use schema::Doc;

/// Bits of a word that hold its payload (a byte offset, or an offset into the unescaped
/// text); the three above hold the kind.
const PAYLOAD_BITS: u32 = 29;
const PAYLOAD: u32 = (1 << PAYLOAD_BITS) - 1;

/// The largest body the tape can address: 512 MiB (the guard's ceiling is 64 MiB).
pub(crate) const MAX_DOCUMENT_BYTES: usize = PAYLOAD as usize;

/// A value's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    Null,
    False,
    True,
    Number,
    /// A string without escapes: its text is the body's, from the payload to the next `"`.
    Plain,
    /// A string with escapes: the next two words are the start and length of its
    /// unescaped text in [`Document::decoded`]; the payload is its body offset.
    Escaped,
    /// The payload is the index of the word after the array's last descendant (that of
    /// an empty array, which has none, its body offset).
    Array,
    /// As `Array`; members are a name's words followed by the value's. A name without
    /// escapes is two words: `Plain`'s, then its length in bytes.
    Object,
}

/// The kind bits of a word. `null`, `true` and `false` share one (the body's byte at
/// the payload tells them apart), so that an empty container, whose payload is its body
/// offset, has its own.
const LITERAL: u32 = 0;
const NUMBER: u32 = 1;
const PLAIN: u32 = 2;
const ESCAPED: u32 = 3;
const ARRAY: u32 = 4;
const OBJECT: u32 = 5;
const EMPTY_ARRAY: u32 = 6;
const EMPTY_OBJECT: u32 = 7;

impl Tag {
    /// The first word of a value of this kind at `payload`.
    pub(crate) fn word(self, payload: usize) -> u32 {
        debug_assert!(payload <= PAYLOAD as usize);
        let code = match self {
            Tag::Null | Tag::False | Tag::True => LITERAL,
            Tag::Number => NUMBER,
            Tag::Plain => PLAIN,
            Tag::Escaped => ESCAPED,
            Tag::Array => ARRAY,
            Tag::Object => OBJECT,
        };
        (code << PAYLOAD_BITS) | (payload as u32 & PAYLOAD)
    }
}

/// The offset of the first `"` in `bytes` (the end of a string without escapes): most
/// are short, and a plain loop finds a near quote before `memchr` has set up.
fn quote(bytes: &[u8]) -> usize {
    let head = bytes.len().min(16);
    match bytes[..head].iter().position(|&b| b == b'"') {
        Some(at) => at,
        None => head + memchr::memchr(b'"', &bytes[head..]).unwrap_or(bytes.len() - head),
    }
}

/// The word of a container whose last descendant's words end before `end`.
pub(crate) fn closed(word: u32, end: u32) -> u32 {
    (word & !PAYLOAD) | (end & PAYLOAD)
}

/// The word of a container that closed empty (its payload stays its body offset).
pub(crate) fn emptied(word: u32) -> u32 {
    match word >> PAYLOAD_BITS {
        ARRAY => (EMPTY_ARRAY << PAYLOAD_BITS) | (word & PAYLOAD),
        OBJECT => (EMPTY_OBJECT << PAYLOAD_BITS) | (word & PAYLOAD),
        _ => word,
    }
}

/// Whether the value at `at` is a string with escapes.
pub(crate) fn is_escaped(words: &[u32], at: u32) -> bool {
    words[at as usize] >> PAYLOAD_BITS == ESCAPED
}

/// The payload of the word at `at`.
pub(crate) fn payload(words: &[u32], at: u32) -> usize {
    (words[at as usize] & PAYLOAD) as usize
}

/// The index of the word after the member name at `at`.
pub(crate) fn name_span(words: &[u32], at: u32) -> u32 {
    match words[at as usize] >> PAYLOAD_BITS {
        ESCAPED => at + 3,
        _ => at + 2,
    }
}

/// The index of the word after the value at `at` and its descendants.
pub(crate) fn span(words: &[u32], at: u32) -> u32 {
    match words[at as usize] >> PAYLOAD_BITS {
        ARRAY | OBJECT => words[at as usize] & PAYLOAD,
        ESCAPED => at + 3,
        _ => at + 1,
    }
}

/// A parsed JSON document: the body and its tape.
#[derive(Debug, Default)]
pub(crate) struct Document<'a> {
    body: &'a str,
    words: Vec<u32>,
    /// The unescaped text of every string with escapes, one after another.
    decoded: String,
    /// Objects of more than [`Object::SCAN`] members: `[tape index, start in order,
    /// member count]`, sorted by tape index.
    indexed: Vec<[u32; 3]>,
    /// For each indexed object, the tape indexes of its member names, sorted by name.
    order: Vec<u32>,
}

impl<'a> Document<'a> {
    pub(crate) fn new(
        body: &'a str,
        words: Vec<u32>,
        decoded: String,
        mut indexed: Vec<[u32; 3]>,
        order: Vec<u32>,
    ) -> Self {
        indexed.sort_unstable_by_key(|entry| entry[0]);
        Self {
            body,
            words,
            decoded,
            indexed,
            order,
        }
    }

    /// The document's value.
    pub(crate) fn root(&self) -> Node<'_> {
        Node { doc: self, at: 0 }
    }

    fn tag(&self, at: u32) -> Tag {
        match self.words[at as usize] >> PAYLOAD_BITS {
            LITERAL => match self.body.as_bytes().get(self.payload(at)) {
                Some(b'n') => Tag::Null,
                Some(b't') => Tag::True,
                _ => Tag::False,
            },
            NUMBER => Tag::Number,
            PLAIN => Tag::Plain,
            ESCAPED => Tag::Escaped,
            ARRAY | EMPTY_ARRAY => Tag::Array,
            _ => Tag::Object,
        }
    }

    fn payload(&self, at: u32) -> usize {
        payload(&self.words, at)
    }

    /// The index of the word after the value at `at` and its descendants.
    fn next(&self, at: u32) -> u32 {
        span(&self.words, at)
    }

    /// The words of the container at `at`'s children: from, to.
    fn children(&self, at: u32) -> (u32, u32) {
        match self.words[at as usize] >> PAYLOAD_BITS {
            ARRAY | OBJECT => (at + 1, self.words[at as usize] & PAYLOAD),
            _ => (at + 1, at + 1),
        }
    }

    /// The byte offset where the value at `at` starts. A non-empty container's word holds
    /// no offset: its first descendant that is not one does, and only white space and
    /// the brackets of the containers between separate them.
    fn start(&self, at: u32) -> usize {
        let mut first = at;
        while matches!(self.words[first as usize] >> PAYLOAD_BITS, ARRAY | OBJECT) {
            first += 1;
        }
        let mut pos = match self.words[first as usize] >> PAYLOAD_BITS {
            PLAIN | ESCAPED => self.payload(first).saturating_sub(1),
            _ => self.payload(first),
        };
        let body = self.body.as_bytes();
        for _ in at..first {
            pos = body[..pos]
                .iter()
                .rposition(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(0);
        }
        pos
    }

    /// The text of the string at `at`.
    fn text(&self, at: u32) -> &str {
        let start = self.payload(at);
        match self.tag(at) {
            Tag::Escaped => {
                let from = self.words[at as usize + 1] as usize;
                let len = self.words[at as usize + 2] as usize;
                &self.decoded[from..from + len]
            }
            _ => {
                let rest = &self.body[start..];
                &rest[..quote(rest.as_bytes())]
            }
        }
    }

    /// The text of the member name at `at`.
    fn name(&self, at: u32) -> &str {
        if self.words[at as usize] >> PAYLOAD_BITS == PLAIN {
            let start = self.payload(at);
            let len = self.words[at as usize + 1] as usize;
            return &self.body[start..start + len];
        }
        self.text(at)
    }

    /// The text of the number at `at`, as written.
    fn number_text(&self, at: u32) -> &str {
        let start = self.payload(at);
        let rest = &self.body[start..];
        let len = rest
            .bytes()
            .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(rest.len());
        &rest[..len]
    }

    /// The members of the indexed object at `at`, sorted by name.
    fn sorted(&self, at: u32) -> Option<&[u32]> {
        let i = self
            .indexed
            .binary_search_by_key(&at, |entry| entry[0])
            .ok()?;
        let [_, start, len] = self.indexed[i];
        Some(&self.order[start as usize..(start + len) as usize])
    }
}

/// One value of a parsed document: a cheap handle (a reference and a word index).
#[derive(Clone, Copy)]
pub(crate) struct Node<'a> {
    doc: &'a Document<'a>,
    at: u32,
}

/// A value's kind and, for scalars, its content.
pub(crate) enum View<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(&'a str),
    Array(Array<'a>),
    Object(Object<'a>),
}

/// An array of a parsed document.
#[derive(Clone, Copy)]
pub(crate) struct Array<'a> {
    doc: &'a Document<'a>,
    at: u32,
}

/// An object of a parsed document; member names are unique (the parser refuses
/// duplicates) and kept in document order.
#[derive(Clone, Copy)]
pub(crate) struct Object<'a> {
    doc: &'a Document<'a>,
    at: u32,
}

impl<'a> Node<'a> {
    fn tag(self) -> Tag {
        self.doc.tag(self.at)
    }

    pub(crate) fn view(self) -> View<'a> {
        let Node { doc, at } = self;
        match self.tag() {
            Tag::Null => View::Null,
            Tag::False => View::Bool(false),
            Tag::True => View::Bool(true),
            Tag::Number => View::Number(number(doc.number_text(at))),
            Tag::Plain | Tag::Escaped => View::String(doc.text(at)),
            Tag::Array => View::Array(Array { doc, at }),
            Tag::Object => View::Object(Object { doc, at }),
        }
    }

    pub(crate) fn json_type(self) -> JsonType {
        match self.tag() {
            Tag::Null => JsonType::Null,
            Tag::False | Tag::True => JsonType::Boolean,
            Tag::Number => JsonType::Number,
            Tag::Plain | Tag::Escaped => JsonType::String,
            Tag::Array => JsonType::Array,
            Tag::Object => JsonType::Object,
        }
    }

    /// The member `name` of an object.
    pub(crate) fn get(self, name: &str) -> Option<Node<'a>> {
        self.as_object()?.get(name)
    }

    pub(crate) fn as_str(self) -> Option<&'a str> {
        match self.tag() {
            Tag::Plain | Tag::Escaped => Some(self.doc.text(self.at)),
            _ => None,
        }
    }

    pub(crate) fn as_bool(self) -> Option<bool> {
        match self.tag() {
            Tag::False => Some(false),
            Tag::True => Some(true),
            _ => None,
        }
    }

    pub(crate) fn as_number(self) -> Option<Number> {
        (self.tag() == Tag::Number).then(|| number(self.doc.number_text(self.at)))
    }

    pub(crate) fn as_object(self) -> Option<Object<'a>> {
        (self.tag() == Tag::Object).then_some(Object {
            doc: self.doc,
            at: self.at,
        })
    }

    pub(crate) fn as_array(self) -> Option<Array<'a>> {
        (self.tag() == Tag::Array).then_some(Array {
            doc: self.doc,
            at: self.at,
        })
    }

    pub(crate) fn is_object(self) -> bool {
        self.tag() == Tag::Object
    }

    /// The value `pointer` names, if any (RFC 6901, as [`Pointer::resolve`]).
    pub(crate) fn resolve(self, pointer: &Pointer) -> Option<Node<'a>> {
        let mut at = self;
        for token in pointer.tokens() {
            at = match at.view() {
                View::Object(object) => object.get(token)?,
                View::Array(items) => items.get(array_index(token)?)?,
                _ => return None,
            };
        }
        Some(at)
    }

    /// How many values this one holds, itself included.
    pub(crate) fn values(self) -> usize {
        enum Open<'a> {
            Items(Items<'a>),
            Members(Members<'a>),
        }
        let open = |node: Node<'a>| match node.view() {
            View::Array(items) => Some(Open::Items(items.iter())),
            View::Object(object) => Some(Open::Members(object.iter())),
            _ => None,
        };
        // One iterator per open container: memory bounded by the depth, not the count.
        let mut count = 1;
        let mut stack: Vec<Open<'a>> = open(self).into_iter().collect();
        while let Some(top) = stack.last_mut() {
            let next = match top {
                Open::Items(items) => items.next(),
                Open::Members(members) => members.next().map(|(_, value)| value),
            };
            match next {
                Some(node) => {
                    count += 1;
                    stack.extend(open(node));
                }
                None => {
                    stack.pop();
                }
            }
        }
        count
    }

    /// An owned `serde_json` copy.
    pub(crate) fn to_value(self) -> Value {
        match self.view() {
            View::Null => Value::Null,
            View::Bool(b) => Value::Bool(b),
            View::Number(n) => Value::Number(n),
            View::String(text) => Value::String(text.to_owned()),
            View::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            View::Object(object) => Value::Object(
                object
                    .iter()
                    .map(|(key, value)| (key.to_owned(), value.to_value()))
                    .collect(),
            ),
        }
    }
    /// Equality with a `serde_json` value under `serde_json`'s rules (numbers equal when
    /// their representations are: `1` is not `1.0`), as the binding checks compare.
    pub(crate) fn same_as(self, other: &Value) -> bool {
        match (self.view(), other) {
            (View::Null, Value::Null) => true,
            (View::Bool(a), Value::Bool(b)) => a == *b,
            (View::Number(a), Value::Number(b)) => a == *b,
            (View::String(a), Value::String(b)) => a == b,
            (View::Array(a), Value::Array(b)) => {
                // In step: counting a tape array's items walks them all.
                let mut items = a.iter();
                b.iter().all(|b| items.next().is_some_and(|a| a.same_as(b)))
                    && items.next().is_none()
            }
            (View::Object(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(key, value)| b.get(key).is_some_and(|other| value.same_as(other)))
            }
            _ => false,
        }
    }

    /// [`Node::same_as`] between two parsed values, without copying either. Arrays are
    /// compared in step, so the cost is at most the smaller value's (counting a tape
    /// array's items walks them all).
    pub(crate) fn same_node(self, other: Node<'_>) -> bool {
        // No walk visits `usize::MAX` pairs: the answer always comes.
        self.same_node_within(other, &mut usize::MAX.clone())
            .unwrap_or(false)
    }

    /// [`Node::same_node`] visiting at most `budget` pairs of nodes (it is reduced by
    /// those visited): `None` when it ran out before an answer.
    pub(crate) fn same_node_within(self, other: Node<'_>, budget: &mut usize) -> Option<bool> {
        *budget = budget.checked_sub(1)?;
        Some(match (self.view(), other.view()) {
            (View::Null, View::Null) => true,
            (View::Bool(a), View::Bool(b)) => a == b,
            (View::Number(a), View::Number(b)) => a == b,
            (View::String(a), View::String(b)) => a == b,
            (View::Array(a), View::Array(b)) => {
                let (mut a, mut b) = (a.iter(), b.iter());
                loop {
                    match (a.next(), b.next()) {
                        (None, None) => break true,
                        (Some(a), Some(b)) if a.same_node_within(b, budget)? => {}
                        _ => break false,
                    }
                }
            }
            (View::Object(a), View::Object(b)) => {
                if a.len() != b.len() {
                    return Some(false);
                }
                for (key, value) in a.iter() {
                    let Some(other) = b.get(key) else {
                        return Some(false);
                    };
                    if !value.same_node_within(other, budget)? {
                        return Some(false);
                    }
                }
                true
            }
            _ => false,
        })
    }

    /// A hash equal for nodes [`Node::same_node`] finds equal: arrays in order, objects
    /// in any order, numbers by value, strings as decoded. `state` keys it (a
    /// `RandomState` per judgement: collisions cannot be chosen by the response).
    pub(crate) fn structural_hash(self, state: &RandomState) -> u64 {
        let mut hasher = state.build_hasher();
        match self.view() {
            View::Null => hasher.write_u8(0),
            View::Bool(b) => {
                hasher.write_u8(1);
                b.hash(&mut hasher);
            }
            View::Number(n) => {
                hasher.write_u8(2);
                n.hash(&mut hasher);
            }
            View::String(s) => {
                hasher.write_u8(3);
                s.hash(&mut hasher);
            }
            View::Array(a) => {
                hasher.write_u8(4);
                for item in a.iter() {
                    hasher.write_u64(item.structural_hash(state));
                }
            }
            View::Object(o) => {
                hasher.write_u8(5);
                // Order-free: the members' hashes summed.
                let (mut sum, mut count) = (0u64, 0u64);
                for (name, value) in o.iter() {
                    let mut member = state.build_hasher();
                    name.hash(&mut member);
                    member.write_u64(value.structural_hash(state));
                    sum = sum.wrapping_add(member.finish());
                    count += 1;
                }
                hasher.write_u64(sum);
                hasher.write_u64(count);
            }
        }
        hasher.finish()
    }
}

/// The number a validated number's text denotes, as the parser reads it.
fn number(text: &str) -> Number {
    // The parser refused every text this could fail on.
    crate::parse::number::number_of(text).unwrap_or_else(|| Number::from(0))
}

impl<'a> Array<'a> {
    pub(crate) fn iter(self) -> Items<'a> {
        let (at, end) = self.doc.children(self.at);
        Items {
            doc: self.doc,
            at,
            end,
        }
    }

    pub(crate) fn len(self) -> usize {
        self.iter().count()
    }

    pub(crate) fn get(self, index: usize) -> Option<Node<'a>> {
        self.iter().nth(index)
    }
}

/// The items of an array.
pub(crate) struct Items<'a> {
    doc: &'a Document<'a>,
    at: u32,
    end: u32,
}

impl<'a> Iterator for Items<'a> {
    type Item = Node<'a>;

    fn next(&mut self) -> Option<Node<'a>> {
        (self.at < self.end).then(|| {
            let node = Node {
                doc: self.doc,
                at: self.at,
            };
            self.at = self.doc.next(self.at);
            node
        })
    }
}

impl<'a> Object<'a> {
    /// Objects up to this size are searched by a scan: comparing a few short names costs
    /// less than any index.
    pub(crate) const SCAN: usize = 16;

    pub(crate) fn len(self) -> usize {
        match self.doc.sorted(self.at) {
            Some(sorted) => sorted.len(),
            None => self.iter().count(),
        }
    }

    /// The member `name`.
    pub(crate) fn get(self, name: &str) -> Option<Node<'a>> {
        let doc = self.doc;
        match doc.sorted(self.at) {
            None => {
                let (mut at, end) = doc.children(self.at);
                while at < end {
                    let value = name_span(&doc.words, at);
                    if doc.name(at) == name {
                        return Some(Node { doc, at: value });
                    }
                    at = doc.next(value);
                }
                None
            }
            Some(sorted) => sorted
                .binary_search_by(|&key| doc.name(key).cmp(name))
                .ok()
                .map(|i| Node {
                    doc,
                    at: name_span(&doc.words, sorted[i]),
                }),
        }
    }

    /// The members, in document order.
    pub(crate) fn iter(self) -> Members<'a> {
        let (at, end) = self.doc.children(self.at);
        Members {
            doc: self.doc,
            at,
            end,
        }
    }
}

/// The members of an object, in document order.
pub(crate) struct Members<'a> {
    doc: &'a Document<'a>,
    at: u32,
    end: u32,
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, Node<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        (self.at < self.end).then(|| {
            let name = self.doc.name(self.at);
            let value = name_span(&self.doc.words, self.at);
            self.at = self.doc.next(value);
            (
                name,
                Node {
                    doc: self.doc,
                    at: value,
                },
            )
        })
    }
}

/// Compact JSON, for operator messages: written as it is read, so a caller that stops
/// writing (a bounded message) never pays for the rest of a large value.
impl fmt::Display for Node<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.tag() {
            Tag::Null => f.write_str("null"),
            Tag::False => f.write_str("false"),
            Tag::True => f.write_str("true"),
            Tag::Number => f.write_str(self.doc.number_text(self.at)),
            Tag::Plain | Tag::Escaped => write_string(f, self.doc.text(self.at)),
            Tag::Array => {
                f.write_char('[')?;
                for (i, item) in self
                    .as_array()
                    .into_iter()
                    .flat_map(Array::iter)
                    .enumerate()
                {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    fmt::Display::fmt(&item, f)?;
                }
                f.write_char(']')
            }
            Tag::Object => {
                f.write_char('{')?;
                for (i, (key, value)) in self
                    .as_object()
                    .into_iter()
                    .flat_map(Object::iter)
                    .enumerate()
                {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    write_string(f, key)?;
                    f.write_char(':')?;
                    fmt::Display::fmt(&value, f)?;
                }
                f.write_char('}')
            }
        }
    }
}

impl fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `text` as a JSON string, escaped as `serde_json` writes it.
fn write_string(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    f.write_char('"')?;
    let mut run = 0;
    for (i, c) in text.char_indices() {
        let escape = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            '\u{8}' => "\\b",
            '\u{c}' => "\\f",
            c if c < ' ' => "",
            _ => continue,
        };
        f.write_str(&text[run..i])?;
        if escape.is_empty() {
            write!(f, "\\u{:04x}", u32::from(c))?;
        } else {
            f.write_str(escape)?;
        }
        run = i + c.len_utf8();
    }
    f.write_str(&text[run..])?;
    f.write_char('"')
}
