//! The parsed response as the guard judges it: a tree whose strings borrow from the raw
//! bytes (a string without escapes costs no allocation) and whose objects keep their
//! members in order without hashing them. The schema validator reads it in place through
//! `jsonschema`'s custom-representation traits; only the agent fields are ever turned into
//! owned `serde_json` values, at projection.

use jsonschema::json::{self, NodeIdentity};
use jsonschema::JsonType;
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;

use crate::pointer::{array_index, Pointer};

/// One JSON value of a parsed document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    Object(Object<'a>),
}

/// The members of an object, in document order (names are unique: the parser refuses
/// duplicates).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Object<'a> {
    members: Vec<(Cow<'a, str>, Node<'a>)>,
    /// For objects past [`Object::SCAN`] members: member positions sorted by name.
    sorted: Option<Box<[usize]>>,
}

impl<'a> Object<'a> {
    /// Objects up to this size are searched by a scan: comparing a few short names costs
    /// less than any index.
    const SCAN: usize = 16;

    pub(crate) fn new(members: Vec<(Cow<'a, str>, Node<'a>)>) -> Self {
        let sorted = (members.len() > Self::SCAN).then(|| {
            let mut order: Vec<usize> = (0..members.len()).collect();
            order.sort_unstable_by(|&a, &b| members[a].0.cmp(&members[b].0));
            order.into_boxed_slice()
        });
        Self { members, sorted }
    }

    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    /// The member `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Node<'a>> {
        match &self.sorted {
            None => self
                .members
                .iter()
                .find_map(|(key, value)| (key == name).then_some(value)),
            Some(order) => order
                .binary_search_by(|&i| self.members[i].0.as_ref().cmp(name))
                .ok()
                .map(|i| &self.members[order[i]].1),
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Node<'a>)> {
        self.members
            .iter()
            .map(|(key, value)| (key.as_ref(), value))
    }

    /// The members, by value, in document order.
    pub(crate) fn into_members(self) -> std::vec::IntoIter<(Cow<'a, str>, Node<'a>)> {
        self.members.into_iter()
    }
}

impl<'a> Node<'a> {
    /// The member `name` of an object.
    pub(crate) fn get(&self, name: &str) -> Option<&Node<'a>> {
        match self {
            Node::Object(object) => object.get(name),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Node::String(text) => Some(text),
            _ => None,
        }
    }

    /// The value `pointer` names, if any (RFC 6901, as [`Pointer::resolve`]).
    pub(crate) fn resolve(&self, pointer: &Pointer) -> Option<&Node<'a>> {
        let mut at = self;
        for token in pointer.tokens() {
            at = match at {
                Node::Object(object) => object.get(token)?,
                Node::Array(items) => items.get(array_index(token)?)?,
                _ => return None,
            };
        }
        Some(at)
    }

    /// An owned `serde_json` value, moving the strings that are already owned.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(b),
            Node::Number(n) => Value::Number(n),
            Node::String(text) => Value::String(text.into_owned()),
            Node::Array(items) => Value::Array(items.into_iter().map(Node::into_value).collect()),
            Node::Object(object) => Value::Object(
                object
                    .members
                    .into_iter()
                    .map(|(key, value)| (key.into_owned(), value.into_value()))
                    .collect(),
            ),
        }
    }

    /// An owned `serde_json` copy.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::String(text) => Value::String(text.to_string()),
            Node::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::Object(object) => Value::Object(
                object
                    .iter()
                    .map(|(key, value)| (key.to_owned(), value.to_value()))
                    .collect(),
            ),
        }
    }

    /// Equality with a `serde_json` value under `serde_json`'s rules (numbers equal when
    /// their representations are: `1` is not `1.0`), as the binding checks compare.
    pub(crate) fn same_as(&self, other: &Value) -> bool {
        match (self, other) {
            (Node::Null, Value::Null) => true,
            (Node::Bool(a), Value::Bool(b)) => a == b,
            (Node::Number(a), Value::Number(b)) => a == b,
            (Node::String(a), Value::String(b)) => a == b,
            (Node::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.same_as(b))
            }
            (Node::Object(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(key, value)| b.get(key).is_some_and(|other| value.same_as(other)))
            }
            _ => false,
        }
    }

    /// Equality under JSON Schema's rules (`const`, `enum`): numbers compare by value.
    fn schema_equal(&self, other: &Value) -> bool {
        match (self, other) {
            (Node::Number(a), Value::Number(b)) => {
                json::cmp::equal(&Value::Number(a.clone()), &Value::Number(b.clone()))
            }
            (Node::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.schema_equal(b))
            }
            (Node::Object(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(key, value)| {
                        b.get(key).is_some_and(|other| value.schema_equal(other))
                    })
            }
            _ => self.same_as(other),
        }
    }
}

/// Compact JSON, for operator messages.
impl fmt::Display for Node<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_value(), f)
    }
}

impl From<Object<'_>> for Map<String, Value> {
    fn from(object: Object<'_>) -> Self {
        match Node::Object(object).into_value() {
            Value::Object(map) => map,
            _ => unreachable!("an object converts to an object"),
        }
    }
}

/// The representation marker `jsonschema` compiles a validator for.
pub(crate) struct Doc;

impl json::Json for Doc {
    type Node<'a> = &'a Node<'a>;
    type PreparedKey = String;
    type StringBuffer = ();

    /// A members pass over an in-order vector is as cheap as a couple of lookups.
    const KEYS_PER_LOOKUP: usize = 2;
    /// A tree: no node contains itself.
    const ACYCLIC: bool = true;

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>((): &mut (), string: &str, f: impl FnOnce(Self::Node<'_>) -> T) -> T {
        f(&Node::String(Cow::Borrowed(string)))
    }
}

impl<'a> json::Node<'a, Doc> for &'a Node<'a> {
    type Object = &'a Object<'a>;
    type Array = &'a [Node<'a>];
    type Number = &'a Number;

    fn as_object(&self) -> Option<&'a Object<'a>> {
        match self {
            Node::Object(object) => Some(object),
            _ => None,
        }
    }

    fn as_array(&self) -> Option<&'a [Node<'a>]> {
        match self {
            Node::Array(items) => Some(items),
            _ => None,
        }
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        match self {
            Node::String(text) => Some(Cow::Borrowed(text.as_ref())),
            _ => None,
        }
    }

    fn as_number(&self) -> Option<&'a Number> {
        match self {
            Node::Number(number) => Some(number),
            _ => None,
        }
    }

    fn as_boolean(&self) -> Option<bool> {
        match self {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    fn json_type(&self) -> JsonType {
        match self {
            Node::Null => JsonType::Null,
            Node::Bool(_) => JsonType::Boolean,
            Node::Number(_) => JsonType::Number,
            Node::String(_) => JsonType::String,
            Node::Array(_) => JsonType::Array,
            Node::Object(_) => JsonType::Object,
        }
    }

    fn string_length_within(&self, min: u64, max: u64) -> Option<bool> {
        let Node::String(text) = self else {
            return None;
        };
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

    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(Node::to_value(self))
    }

    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(
            std::ptr::from_ref::<Node<'a>>(self) as usize
        ))
    }
}

/// The members of an object, as `jsonschema` walks them.
pub(crate) struct Members<'a>(std::slice::Iter<'a, (Cow<'a, str>, Node<'a>)>);

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, &'a Node<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(key, value)| (key.as_ref(), value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<'a> json::Object<'a, Doc> for &'a Object<'a> {
    type Node = &'a Node<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        self.members.len()
    }

    fn get(&self, key: &String) -> Option<&'a Node<'a>> {
        Object::get(self, key)
    }

    fn members(&self) -> Members<'a> {
        Members(self.members.iter())
    }
}

impl<'a> json::Array<'a, Doc> for &'a [Node<'a>] {
    type Node = &'a Node<'a>;
    type ElementsIter = std::slice::Iter<'a, Node<'a>>;

    fn len(&self) -> usize {
        <[Node<'a>]>::len(self)
    }

    fn elements(&self) -> std::slice::Iter<'a, Node<'a>> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_doc;
    use serde_json::json;

    #[test]
    fn strings_without_escapes_borrow_the_input() {
        let body = br#"{"plain":"abc","escaped":"a\nb"}"#;
        let doc = parse_doc(body, 8).unwrap();
        assert!(matches!(
            doc.get("plain"),
            Some(Node::String(Cow::Borrowed("abc")))
        ));
        assert!(matches!(doc.get("escaped"), Some(Node::String(Cow::Owned(s))) if s == "a\nb"));
    }

    #[test]
    fn large_objects_are_looked_up_through_the_sorted_index() {
        let members: Vec<String> = (0..40).rev().map(|i| format!("\"k{i}\":{i}")).collect();
        let body = format!("{{{}}}", members.join(","));
        let doc = parse_doc(body.as_bytes(), 8).unwrap();
        for i in 0..40 {
            assert_eq!(doc.get(&format!("k{i}")), Some(&Node::Number(i.into())));
        }
        assert_eq!(doc.get("k40"), None);
        assert_eq!(doc.get(""), None);
    }

    #[test]
    fn conversion_keeps_order_and_values() {
        let body = br#"{"z":[1,-2,0.5,true,null],"a":{"\u00e9":"x"},"m":""}"#;
        let value = parse_doc(body, 8).unwrap().into_value();
        assert_eq!(value, serde_json::from_slice::<Value>(body).unwrap());
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["z", "a", "m"]);
    }

    #[test]
    fn binding_equality_is_serde_json_equality_and_schema_equality_is_numeric() {
        let doc = parse_doc(br#"{"n":1,"f":1.0,"o":{"a":[1,"x"],"b":null}}"#, 8).unwrap();
        let n = doc.get("n").unwrap();
        assert!(n.same_as(&json!(1)));
        assert!(!n.same_as(&json!(1.0)));
        assert!(n.schema_equal(&json!(1.0)));
        assert!(doc.get("f").unwrap().schema_equal(&json!(1)));
        let o = doc.get("o").unwrap();
        assert!(o.same_as(&json!({"b": null, "a": [1, "x"]})));
        assert!(!o.same_as(&json!({"b": null, "a": [1, "y"]})));
        assert!(!o.same_as(&json!({"a": [1, "x"]})));
    }
}
