//! The tape as `jsonschema` reads it: the custom-representation traits, JSON Schema's
//! equality (`const`, `enum`, `uniqueItems`) and what a validation error shows of a value.

use jsonschema::json::{self, NodeIdentity};
use jsonschema::JsonType;
use jsonschema_value::LazyInstance;
use serde_json::{Number, Value};
use std::borrow::Cow;
use std::cmp::Ordering;

use super::excerpt::{excerpt, EXCERPT_BYTES};
use super::{Array, Document, Items, Members, Node, Object, Tag, View};

impl<'a> Node<'a> {
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

    /// Equality under JSON Schema's rules (`const`, `enum`): numbers compare by value.
    pub(super) fn schema_equal(self, other: &Value) -> bool {
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

/// The representation marker `jsonschema` compiles a validator for.
pub(crate) struct Doc;

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
