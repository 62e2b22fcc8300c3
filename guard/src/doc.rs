//! The parsed response as the guard judges it: a tape of 32-bit words over the raw body.
//! A scalar is one word (its kind and the byte offset of its text), a container one (its
//! kind and the index of the word after its last descendant), a member name two (the
//! second is its length: names are compared often), a string with escapes three (its
//! unescaped text lives in one shared buffer). Strings without escapes and numbers
//! are read from the body when asked for; nothing is allocated per value, so a parsed
//! document costs at most twice its body's size (a body of `[0,0,…]`, one word per two
//! bytes), whatever its shape. The schema validator reads it in place through
//! `jsonschema`'s custom-representation traits; only the agent fields are ever turned into
//! owned `serde_json` values, at projection.

use jsonschema::json::{self, NodeIdentity};
use jsonschema::JsonType;
use jsonschema_value::LazyInstance;
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt::{self, Write as _};

use crate::pointer::{array_index, Pointer};

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
pub(crate) fn quote(bytes: &[u8]) -> usize {
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

    /// The byte offset where the value starts in the body.
    fn start(self) -> usize {
        self.doc.start(self.at)
    }

    /// What a validator's error shows of this value: an excerpt of at most
    /// [`EXCERPT_BYTES`], built only when the error is read.
    fn excerpt(self) -> LazyInstance<'a> {
        if self.doc.body.is_empty() {
            // A member name `propertyNames` judges: not in the body.
            let text = self.as_str().unwrap_or_default();
            let mut end = text.len().min(EXCERPT_BYTES);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            return LazyInstance::Ready(Cow::Owned(Value::String(text[..end].to_owned())));
        }
        LazyInstance::Deferred {
            bytes: self.doc.body.as_bytes(),
            // Below `MAX_DOCUMENT_BYTES`.
            tag: self.start() as u32,
            make: excerpt,
            cell: std::sync::OnceLock::new(),
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
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.same_as(b))
            }
            (View::Object(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(key, value)| b.get(key).is_some_and(|other| value.same_as(other)))
            }
            _ => false,
        }
    }

    /// [`Node::same_as`] between two parsed values, without copying either.
    pub(crate) fn same_node(self, other: Node<'_>) -> bool {
        match (self.view(), other.view()) {
            (View::Null, View::Null) => true,
            (View::Bool(a), View::Bool(b)) => a == b,
            (View::Number(a), View::Number(b)) => a == b,
            (View::String(a), View::String(b)) => a == b,
            (View::Array(a), View::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(a, b)| a.same_node(b))
            }
            (View::Object(a), View::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(key, value)| b.get(key).is_some_and(|other| value.same_node(other)))
            }
            _ => false,
        }
    }

    /// Equality under JSON Schema's rules (`const`, `enum`): numbers compare by value.
    fn schema_equal(self, other: &Value) -> bool {
        match (self.view(), other) {
            (View::Number(a), Value::Number(b)) => {
                json::cmp::equal(&Value::Number(a), &Value::Number(b.clone()))
            }
            (View::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.schema_equal(b))
            }
            (View::Object(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(key, value)| {
                        b.get(key).is_some_and(|other| value.schema_equal(other))
                    })
            }
            _ => self.same_as(other),
        }
    }

    /// The order `uniqueItems` sorts by: equal under JSON Schema's rules exactly when
    /// `Equal` (numbers by value, members in any order).
    fn schema_cmp(self, other: Node<'_>) -> Ordering {
        fn rank(view: &View<'_>) -> u8 {
            match view {
                View::Null => 0,
                View::Bool(_) => 1,
                View::Number(_) => 2,
                View::String(_) => 3,
                View::Array(_) => 4,
                View::Object(_) => 5,
            }
        }
        let (a, b) = (self.view(), other.view());
        match (&a, &b) {
            (View::Bool(x), View::Bool(y)) => x.cmp(y),
            (View::Number(x), View::Number(y)) => number_cmp(x, y),
            (View::String(x), View::String(y)) => x.cmp(y),
            (View::Array(x), View::Array(y)) => {
                let mut left = x.iter();
                let mut right = y.iter();
                loop {
                    match (left.next(), right.next()) {
                        (None, None) => return Ordering::Equal,
                        (None, Some(_)) => return Ordering::Less,
                        (Some(_), None) => return Ordering::Greater,
                        (Some(l), Some(r)) => match l.schema_cmp(r) {
                            Ordering::Equal => {}
                            unequal => return unequal,
                        },
                    }
                }
            }
            (View::Object(x), View::Object(y)) => {
                fn by_name<'o>(object: &Object<'o>) -> Vec<(&'o str, u32)> {
                    let mut members: Vec<(&str, u32)> =
                        object.iter().map(|(key, value)| (key, value.at)).collect();
                    members.sort_unstable_by(|l, r| l.0.cmp(r.0));
                    members
                }
                let (l, r) = (by_name(x), by_name(y));
                l.len().cmp(&r.len()).then_with(|| {
                    for ((lk, lv), (rk, rv)) in l.iter().zip(&r) {
                        let order = lk.cmp(rk).then_with(|| {
                            Node {
                                doc: x.doc,
                                at: *lv,
                            }
                            .schema_cmp(Node {
                                doc: y.doc,
                                at: *rv,
                            })
                        });
                        if order != Ordering::Equal {
                            return order;
                        }
                    }
                    Ordering::Equal
                })
            }
            _ => rank(&a).cmp(&rank(&b)),
        }
    }
}

/// The number a validated number's text denotes, as the parser reads it.
fn number(text: &str) -> Number {
    // The parser refused every text this could fail on.
    crate::parse::number_of(text).unwrap_or_else(|| Number::from(0))
}

/// Numbers by value, exactly: `1` equals `1.0`, and an integer past `f64`'s exact range
/// is not the float nearest it.
fn number_cmp(a: &Number, b: &Number) -> Ordering {
    fn integer(n: &Number) -> Option<i128> {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    }
    /// An integer against a finite float.
    fn against(i: i128, f: f64) -> Ordering {
        // Past ±2^64 no 64-bit integer reaches; within, a whole float is exact.
        const PAST: f64 = 18_446_744_073_709_551_616.0;
        if f >= PAST {
            return Ordering::Less;
        }
        if f <= -PAST {
            return Ordering::Greater;
        }
        let whole = f.floor();
        #[allow(clippy::cast_possible_truncation)]
        let floor = whole as i128;
        i.cmp(&floor).then(if f > whole {
            Ordering::Less
        } else {
            Ordering::Equal
        })
    }
    let float = |n: &Number| n.as_f64().unwrap_or(0.0);
    match (integer(a), integer(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(x), None) => against(x, float(b)),
        (None, Some(y)) => against(y, float(a)).reverse(),
        (None, None) => float(a).partial_cmp(&float(b)).unwrap_or(Ordering::Equal),
    }
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

/// The value starting at byte `start` of `body` (a document the parser accepted), cut to
/// about [`EXCERPT_BYTES`]: whole when it is that small, else its first members, items
/// and characters. Reads only the bytes it shows.
fn excerpt(body: &[u8], start: u32) -> Value {
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

/// The representation marker `jsonschema` compiles a validator for.
pub(crate) struct Doc;

/// What a validator's error shows of a value: about this many bytes (messages are cut at
/// [`crate::audit::MAX_TEXT_BYTES`]).
const EXCERPT_BYTES: usize = 2 * crate::audit::MAX_TEXT_BYTES;

impl json::Json for Doc {
    type Node<'a> = Node<'a>;
    type PreparedKey = String;
    type StringBuffer = Document<'static>;

    /// A members pass over the tape is as cheap as a couple of lookups.
    const KEYS_PER_LOOKUP: usize = 2;
    /// A tree: no node contains itself.
    const ACYCLIC: bool = true;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(
        buffer: &mut Document<'static>,
        string: &str,
        f: impl FnOnce(Node<'_>) -> T,
    ) -> T {
        buffer.decoded.clear();
        buffer.decoded.push_str(string);
        buffer.words.clear();
        buffer
            .words
            .extend([Tag::Escaped.word(0), 0, string.len() as u32]);
        f(Node { doc: buffer, at: 0 })
    }
}

impl<'a> json::Node<'a, Doc> for Node<'a> {
    type Object = Object<'a>;
    type Array = Array<'a>;
    type Number = Number;

    fn as_object(&self) -> Option<Object<'a>> {
        Node::as_object(*self)
    }

    fn as_array(&self) -> Option<Array<'a>> {
        Node::as_array(*self)
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        Node::as_str(*self).map(Cow::Borrowed)
    }

    fn as_number(&self) -> Option<Number> {
        Node::as_number(*self)
    }

    fn is_number(&self) -> bool {
        self.tag() == Tag::Number
    }

    fn as_boolean(&self) -> Option<bool> {
        self.as_bool()
    }

    fn is_null(&self) -> bool {
        self.tag() == Tag::Null
    }

    fn json_type(&self) -> JsonType {
        Node::json_type(*self)
    }

    fn string_length_within(&self, min: u64, max: u64) -> Option<bool> {
        let text = self.as_str()?;
        // A code point takes one to four bytes: most bounds are decided without counting.
        let bytes = text.len() as u64;
        if bytes < min || bytes.div_ceil(4) > max {
            return Some(false);
        }
        if min <= bytes.div_ceil(4) && bytes <= max {
            return Some(true);
        }
        Some((min..=max).contains(&(text.chars().count() as u64)))
    }

    fn equals_value(&self, expected: &Value) -> bool {
        self.schema_equal(expected)
    }

    /// Only error messages read this (the guard has no custom keywords, and equality and
    /// `uniqueItems` are answered on the tape): an excerpt, so no rejection copies a large
    /// value.
    fn to_value(&self) -> Cow<'a, Value> {
        self.excerpt().into_cow()
    }

    fn lazy_value(&self) -> LazyInstance<'a> {
        self.excerpt()
    }

    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::tagged(
            std::ptr::from_ref::<Document<'a>>(self.doc) as usize,
            self.at,
        ))
    }
}

impl<'a> json::Object<'a, Doc> for Object<'a> {
    type Node = Node<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        Object::len(*self)
    }

    fn get(&self, key: &String) -> Option<Node<'a>> {
        Object::get(*self, key)
    }

    fn members(&self) -> Members<'a> {
        self.iter()
    }
}

impl<'a> json::Array<'a, Doc> for Array<'a> {
    type Node = Node<'a>;
    type ElementsIter = Items<'a>;

    fn len(&self) -> usize {
        Array::len(*self)
    }

    fn elements(&self) -> Items<'a> {
        self.iter()
    }

    /// Sorted handles (four bytes an item), never copies of the items.
    fn is_unique(&self) -> bool {
        let mut items: Vec<u32> = self.iter().map(|item| item.at).collect();
        let doc = self.doc;
        let node = |at: u32| Node { doc, at };
        items.sort_unstable_by(|&a, &b| node(a).schema_cmp(node(b)));
        items
            .windows(2)
            .all(|pair| node(pair[0]).schema_cmp(node(pair[1])) != Ordering::Equal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_doc;
    use serde_json::json;

    #[test]
    fn strings_without_escapes_are_read_from_the_body() {
        let body = br#"{"plain":"abc","escaped":"a\nb"}"#;
        let doc = parse_doc(body, 8).unwrap();
        let root = doc.root();
        assert_eq!(root.get("plain").unwrap().tag(), Tag::Plain);
        assert_eq!(root.get("plain").unwrap().as_str(), Some("abc"));
        assert_eq!(root.get("escaped").unwrap().tag(), Tag::Escaped);
        assert_eq!(root.get("escaped").unwrap().as_str(), Some("a\nb"));
        assert!(doc.decoded.len() == 3);
    }

    #[test]
    fn literals_and_empty_containers_take_one_word() {
        let body = br#"[null,true,false,[],{},[[]],{"a":{}}]"#;
        let doc = parse_doc(body, 8).unwrap();
        // The array, three literals, two empties, [[]] (1 + 1), {"a":{}} (1 + 2 + 1).
        assert_eq!(doc.words.len(), 1 + 3 + 2 + 2 + 4);
        assert_eq!(
            doc.root().to_value(),
            serde_json::from_slice::<Value>(body).unwrap()
        );
        let items: Vec<Node<'_>> = doc.root().as_array().unwrap().iter().collect();
        assert_eq!(items.len(), 7);
        assert_eq!(items[3].as_array().unwrap().len(), 0);
        assert_eq!(items[4].as_object().unwrap().len(), 0);
        assert!(items[6]
            .get("a")
            .unwrap()
            .as_object()
            .unwrap()
            .get("x")
            .is_none());
    }

    #[test]
    fn large_objects_are_looked_up_through_the_sorted_index() {
        let members: Vec<String> = (0..40).rev().map(|i| format!("\"k{i}\":{i}")).collect();
        let body = format!("{{{}}}", members.join(","));
        let doc = parse_doc(body.as_bytes(), 8).unwrap();
        let root = doc.root();
        assert!(doc.sorted(0).is_some());
        for i in 0..40 {
            assert!(root.get(&format!("k{i}")).unwrap().same_as(&json!(i)));
        }
        assert!(root.get("k40").is_none());
        // Names with escapes take three words: the value follows them.
        let escaped: Vec<String> = (0..40).map(|i| format!("\"\\u006b{i}\":{i}")).collect();
        let body = format!("{{{}}}", escaped.join(","));
        let doc = parse_doc(body.as_bytes(), 8).unwrap();
        assert!(doc.root().get("k39").unwrap().same_as(&json!(39)));
        assert!(root.get("").is_none());
        assert_eq!(root.as_object().unwrap().len(), 40);
    }

    #[test]
    fn conversion_keeps_order_and_values() {
        let body = br#"{"z":[1,-2,0.5,true,null],"a":{"\u00e9":"x"},"m":""}"#;
        let value = parse_doc(body, 8).unwrap().root().to_value();
        assert_eq!(value, serde_json::from_slice::<Value>(body).unwrap());
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["z", "a", "m"]);
    }

    #[test]
    fn binding_equality_is_serde_json_equality_and_schema_equality_is_numeric() {
        let doc = parse_doc(br#"{"n":1,"f":1.0,"o":{"a":[1,"x"],"b":null}}"#, 8).unwrap();
        let root = doc.root();
        let n = root.get("n").unwrap();
        assert!(n.same_as(&json!(1)));
        assert!(!n.same_as(&json!(1.0)));
        assert!(n.schema_equal(&json!(1.0)));
        assert!(root.get("f").unwrap().schema_equal(&json!(1)));
        let o = root.get("o").unwrap();
        assert!(o.same_as(&json!({"b": null, "a": [1, "x"]})));
        assert!(!o.same_as(&json!({"b": null, "a": [1, "y"]})));
        assert!(!o.same_as(&json!({"a": [1, "x"]})));
        let other = parse_doc(br#"{"b":null,"a":[1,"x"]}"#, 8).unwrap();
        assert!(o.same_node(other.root()));
        assert!(!n.same_node(root.get("f").unwrap()));
    }

    #[test]
    fn display_is_compact_json_in_document_order() {
        let body = b" { \"z\" : [ 1 , 2.50 ] , \"a\" : \"q\\\"\\u0001\\u00e9\" } ";
        let doc = parse_doc(body, 8).unwrap();
        assert_eq!(doc.root().to_string(), r#"{"z":[1,2.50],"a":"q\"\u0001é"}"#);
    }

    #[test]
    fn an_excerpt_shows_a_small_value_whole_and_a_large_one_in_part() {
        let small = br#" { "a" : [1, 2.5e3, {"b": "c\n\u00e9\ud83d\ude00", "t": true}], "n": null, "f": false, "e": [ [ [ {"x": [ ]} ] ] ] } "#;
        let doc = parse_doc(small, 8).unwrap();
        let shown = json::Node::to_value(&doc.root()).into_owned();
        assert_eq!(shown, serde_json::from_slice::<Value>(small).unwrap());
        let inner = doc
            .root()
            .get("a")
            .unwrap()
            .as_array()
            .unwrap()
            .get(2)
            .unwrap();
        assert_eq!(
            json::Node::to_value(&inner).into_owned(),
            json!({"b": "c\n\u{e9}\u{1F600}", "t": true})
        );
        // A container's start is found from its first descendant's.
        let nested = doc.root().get("e").unwrap();
        assert_eq!(
            json::Node::to_value(&nested).into_owned(),
            json!([[[{"x": []}]]])
        );
        let deepest = nested
            .resolve(&Pointer::parse("/0/0/0/x").unwrap())
            .unwrap();
        assert_eq!(json::Node::to_value(&deepest).into_owned(), json!([]));

        let big = format!("[{}0]", "0,".repeat(100_000));
        let doc = parse_doc(big.as_bytes(), 8).unwrap();
        let excerpt = json::Node::to_value(&doc.root()).into_owned();
        let shown = excerpt.as_array().unwrap().len();
        assert!((100..=EXCERPT_BYTES).contains(&shown), "{shown}");

        let long = format!("{{\"s\":\"{}\",\"t\":1}}", "\\u00e9x".repeat(10_000));
        let doc = parse_doc(long.as_bytes(), 8).unwrap();
        let excerpt = json::Node::to_value(&doc.root()).into_owned();
        let s = excerpt["s"].as_str().unwrap();
        assert!(
            s.len() <= EXCERPT_BYTES && s.starts_with("\u{e9}x\u{e9}x"),
            "{s}"
        );
        assert!(excerpt.get("t").is_none());
    }

    #[test]
    fn unique_items_compare_by_schema_equality() {
        let unique = |body: &str| {
            let doc = parse_doc(body.as_bytes(), 8).unwrap();
            json::Array::is_unique(&doc.root().as_array().unwrap())
        };
        assert!(unique(
            "[1,2,\"1\",[1],{\"a\":1},{\"a\":2},null,true,false]"
        ));
        assert!(!unique("[1,1.0]"));
        assert!(!unique("[{\"a\":1,\"b\":[2]},{\"b\":[2.0],\"a\":1}]"));
        assert!(!unique("[\"x\",\"\\u0078\"]"));
        assert!(unique("[[1,2],[2,1]]"));
        assert!(unique("[9007199254740993,9007199254740992]"));
        assert!(!unique("[18446744073709551615,18446744073709551615]"));
    }

    #[test]
    fn a_name_node_reads_as_a_string() {
        let mut buffer = Document::default();
        let kind = <Doc as json::Json>::with_string_node(&mut buffer, "na\"me", |node| {
            (node.json_type(), node.as_str().map(str::to_owned))
        });
        assert_eq!(kind, (JsonType::String, Some("na\"me".to_owned())));
    }
}
