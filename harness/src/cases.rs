//! A case: one request and one upstream outcome (raw bytes or a transport error), with the
//! class and location of the variant it came from, its stable id, and the canary tokens
//! planted in it. Helpers build raw JSON that a `Value` cannot hold (duplicates, splices).

use airlock_guard::{Request, TransportError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the upstream did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Upstream {
    /// It answered these raw bytes.
    Body(#[serde(with = "b64")] Vec<u8>),
    /// The transport failed.
    Transport(TransportError),
}

/// What a case is expected to do, as far as its construction says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Expectation {
    /// Must be admitted (an accepted fixture).
    Admit,
    /// Must be rejected whatever the schema says (a near-miss fixture, a duplicate, an
    /// over-size body, a binding mismatch …).
    Reject,
    /// A transport failure: `UPSTREAM_UNAVAILABLE`.
    Transport,
    /// The reference decides.
    Reference,
}

/// One case of a check run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Case {
    /// Stable id: `class/origin/location…`; with the seed, it reproduces the case.
    pub id: String,
    /// The variant class (`fixture`, `extra_property`, `duplicate_member`, …).
    pub class: String,
    /// Where the variant was applied: a JSON pointer, `byte:N`, or empty.
    pub location: String,
    /// The fixture it was derived from (file name), if any.
    pub origin: Option<String>,
    /// The request.
    pub request: Request,
    /// The upstream's answer.
    pub upstream: Upstream,
    /// Canary tokens planted in the body; none may reach the agent.
    pub canaries: Vec<String>,
    /// What construction says the verdict must be.
    pub expect: Expectation,
}

mod b64 {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)
    }
}

/// A small deterministic generator (SplitMix64): the same seed gives the same cases on
/// every platform and every version of every dependency.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator for `seed` and a stream name (so streams do not overlap).
    pub fn new(seed: u64, stream: &str) -> Self {
        Self(seed ^ fnv1a(stream.as_bytes()))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }
}

/// FNV-1a, for stable seeds from names.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `name` (a contract's tool, a case id, anything a contract, corpus or adapter chose) as
/// one file-name component that stays inside the folder it is joined to: characters
/// outside `[A-Za-z0-9_.-]` become `_`, at most 128 are kept (a tool name's own bound), and a name that had to be
/// changed (or is empty, `.` or `..`) gets a digest of the original, so two names never
/// share a file.
pub fn file_component(name: &str) -> String {
    if airlock_guard::is_tool_name(name) {
        return name.to_owned();
    }
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(128)
        .collect();
    format!("{safe}_{:08x}", fnv1a(name.as_bytes()) as u32)
}

/// A canary token for `(seed, case id, n)`: `zq` and 14 lower-case base-32 characters,
/// unlikely to occur anywhere by chance, even as an 8-character window.
pub(crate) fn canary(seed: u64, id: &str, n: u32) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let mut rng = Rng::new(seed ^ u64::from(n).wrapping_mul(0x9E37), id);
    let mut out = String::from("zq");
    for _ in 0..14 {
        out.push(char::from(ALPHABET[rng.below(32)]));
    }
    out
}

/// Escape one JSON Pointer reference token, as an owned string (the guard's rule,
/// [`airlock_guard::Pointer::escape_token`]).
pub fn escape_token(token: &str) -> String {
    airlock_guard::Pointer::escape_token(token).into_owned()
}

/// Every object in `value` by JSON pointer, parents first.
pub fn object_pointers(value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(value, String::new(), &mut |pointer, v| {
        if v.is_object() {
            out.push(pointer.to_owned());
        }
    });
    out
}

/// Every member of every object in `value`: `(object pointer, member name)`.
pub fn member_pointers(value: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(value, String::new(), &mut |pointer, v| {
        if let Value::Object(map) = v {
            for key in map.keys() {
                out.push((pointer.to_owned(), key.clone()));
            }
        }
    });
    out
}

fn walk(value: &Value, at: String, f: &mut dyn FnMut(&str, &Value)) {
    f(&at, value);
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                walk(v, format!("{at}/{}", escape_token(k)), f);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk(v, format!("{at}/{i}"), f);
            }
        }
        _ => {}
    }
}

/// Serialise `document` with the value at `pointer` replaced by the raw bytes `raw`
/// (which need not be valid JSON: duplicates, invalid UTF-8, lone surrogates …).
/// `None` when `pointer` does not exist.
///
/// Written as `serde_json` writes a compact document, walking down the pointer: the
/// document is neither copied nor searched (a large MCP message was cloned and its text
/// scanned for a marker).
pub(crate) fn splice(document: &Value, pointer: &str, raw: &[u8]) -> Option<Vec<u8>> {
    let path: Vec<String> = match pointer {
        "" => Vec::new(),
        _ => pointer
            .strip_prefix('/')?
            .split('/')
            .map(|token| token.replace("~1", "/").replace("~0", "~"))
            .collect(),
    };
    let mut out = Vec::with_capacity(raw.len() + 64);
    write_spliced(&mut out, document, &path, raw)?;
    Some(out)
}

/// Write `value` into `out` with the value at `path` (below it) replaced by `raw`.
fn write_spliced(out: &mut Vec<u8>, value: &Value, path: &[String], raw: &[u8]) -> Option<()> {
    let Some((token, rest)) = path.split_first() else {
        out.extend_from_slice(raw);
        return Some(());
    };
    match value {
        Value::Object(map) => {
            map.get(token)?;
            out.push(b'{');
            for (i, (name, member)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, name).ok()?;
                out.push(b':');
                if name == token {
                    write_spliced(out, member, rest, raw)?;
                } else {
                    serde_json::to_writer(&mut *out, member).ok()?;
                }
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            // As `Value::pointer` reads an index: decimal digits, no sign, no leading zero.
            if token.starts_with('+') || (token.starts_with('0') && token.len() > 1) {
                return None;
            }
            let index: usize = token.parse().ok()?;
            items.get(index)?;
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                if i == index {
                    write_spliced(out, item, rest, raw)?;
                } else {
                    serde_json::to_writer(&mut *out, item).ok()?;
                }
            }
            out.push(b']');
        }
        _ => return None,
    }
    Some(())
}

/// The raw text of `object` with member `name` written twice: `first` then `second`
/// at the member's position (the original order of the others kept).
pub(crate) fn object_with_duplicate(
    object: &serde_json::Map<String, Value>,
    name: &str,
    first: &Value,
    second: &Value,
) -> Vec<u8> {
    let key = serde_json::to_string(name).unwrap_or_default();
    object_with_duplicate_key(object, name, &key, first, second)
}

/// As [`object_with_duplicate`], the second occurrence's name written as the raw string
/// literal `second_key` (such as [`escaped_first_char`] of `name`).
pub(crate) fn object_with_duplicate_key(
    object: &serde_json::Map<String, Value>,
    name: &str,
    second_key: &str,
    first: &Value,
    second: &Value,
) -> Vec<u8> {
    let key = serde_json::to_string(name).unwrap_or_default();
    let mut out = String::from("{");
    let mut sep = "";
    for (k, v) in object {
        if k == name {
            out.push_str(&format!("{sep}{key}:{first},{second_key}:{second}"));
        } else {
            out.push_str(&format!(
                "{sep}{}:{v}",
                serde_json::to_string(k).unwrap_or_default()
            ));
        }
        sep = ",";
    }
    out.push('}');
    out.into_bytes()
}

/// The JSON string literal of `name` with its first character written as a `\uXXXX`
/// escape (a surrogate pair beyond the BMP): the same name once unescaped. `None` for
/// the empty name.
pub(crate) fn escaped_first_char(name: &str) -> Option<String> {
    let first = name.chars().next()?;
    let mut units = [0u16; 2];
    let escaped: String = first
        .encode_utf16(&mut units)
        .iter()
        .map(|u| format!("\\u{u:04x}"))
        .collect();
    let rest = serde_json::to_string(&name[first.len_utf8()..]).ok()?;
    Some(format!("\"{escaped}{}", &rest[1..]))
}

/// The offsets just past every structural `{`, `[`, `,` and `:` of a JSON text (those
/// inside strings skipped): where a truncated body ends at a structural boundary.
pub(crate) fn structural_boundaries(bytes: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for (i, &c) in bytes.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'{' | b'[' | b',' | b':' => out.push(i + 1),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes are the document's compact text with the pointed value's text replaced,
    /// whatever the document holds (it once held a marker string put in the value's place).
    #[test]
    fn a_splice_lands_in_its_place_whatever_the_document_holds() {
        let doc = serde_json::json!({
            "old": "\u{0}airlock-splice\u{0}",
            "a": "\u{0}airlock-splice-0\u{0}",
            "b": "x\"\u{0}airlock-splice-1\u{0}",
            "c": [1],
            "d": true,
            "e/~f": {"01": [0, {"g": null}]}
        });
        let mut zero = doc.clone();
        zero["c"] = Value::from(0);
        let expected = serde_json::to_string(&zero)
            .unwrap()
            .replace(r#""c":0,"#, r#""c":RAW,"#);
        assert_eq!(splice(&doc, "/c", b"RAW").unwrap(), expected.as_bytes());
        let inner = splice(&doc, "/e~1~0f/01/1/g", b"RAW").unwrap();
        assert!(String::from_utf8(inner)
            .unwrap()
            .ends_with(r#""e/~f":{"01":[0,{"g":RAW}]}}"#),);
        assert_eq!(splice(&doc, "", b"RAW").unwrap(), b"RAW");
        for missing in [
            "/missing",
            "c",
            "/c/1",
            "/c/01",
            "/c/+0",
            "/d/x",
            "/e~1~0f/1",
        ] {
            assert_eq!(splice(&doc, missing, b"RAW"), None, "{missing}");
        }
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[a-z/~\"\\\u{0}-\u{1f}é]{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
                proptest::collection::btree_map("[a-z/~0-9]{0,3}", inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Every location `walk` names, spliced with a number: the same bytes as the
        /// document with that value set to it, serialised by serde_json.
        #[test]
        fn a_splice_equals_the_document_with_the_value_replaced(doc in json_value()) {
            let mut locations = Vec::new();
            walk(&doc, String::new(), &mut |at, _| locations.push(at.to_owned()));
            for at in locations {
                let mut replaced = doc.clone();
                *replaced.pointer_mut(&at).unwrap() = Value::from(123_456_789);
                let expected = serde_json::to_vec(&replaced).unwrap();
                proptest::prop_assert_eq!(splice(&doc, &at, b"123456789"), Some(expected), "{}", at);
            }
        }
    }

    #[test]
    fn file_component_keeps_every_name_inside_the_folder_it_is_joined_to() {
        use std::path::{Component, Path};
        let base = Path::new("/reproducers");
        let hostile = [
            "",
            ".",
            "..",
            "../../etc/passwd",
            "a/b",
            "/abs",
            "x\\y",
            "c:evil",
            "nul\0x",
        ];
        let mut seen = std::collections::BTreeSet::new();
        for name in hostile.iter().chain(&["review_status", "job.run-1"]) {
            let component = file_component(name);
            let joined = base.join(&component);
            assert_eq!(joined.parent(), Some(base), "{name:?} -> {component:?}");
            assert!(
                matches!(joined.components().next_back(), Some(Component::Normal(_))),
                "{name:?} -> {component:?}"
            );
            assert!(seen.insert(component), "{name:?} shares a file name");
        }
        assert_eq!(file_component("review_status"), "review_status");
        assert_eq!(file_component("job.run-1"), "job.run-1");
        // A tool name may be 128 characters: its corpus folder is its own name.
        let longest = "t".repeat(128);
        assert_eq!(file_component(&longest), longest);
    }
    use serde_json::json;

    #[test]
    fn splice_replaces_exactly_the_pointed_value_with_raw_bytes() {
        let doc = json!({"a": {"b": 1}, "c": "x"});
        let out = splice(&doc, "/a/b", b"\"\\ud800\"").unwrap();
        assert_eq!(out, br#"{"a":{"b":"\ud800"},"c":"x"}"#);
        assert!(splice(&doc, "/nope", b"1").is_none());
    }

    #[test]
    fn duplicate_writes_the_member_twice_in_place() {
        let doc = json!({"x": 1, "approved": false, "y": 2});
        let out = object_with_duplicate(
            doc.as_object().unwrap(),
            "approved",
            &json!(false),
            &json!(true),
        );
        assert_eq!(out, br#"{"x":1,"approved":false,"approved":true,"y":2}"#);
    }

    #[test]
    fn an_escaped_first_char_names_the_same_member() {
        let key = escaped_first_char("approved").unwrap();
        assert_eq!(key, r#""\u0061pproved""#);
        assert_eq!(serde_json::from_str::<String>(&key).unwrap(), "approved");
        let wide = escaped_first_char("😀/x\"").unwrap();
        assert_eq!(serde_json::from_str::<String>(&wide).unwrap(), "😀/x\"");
        assert!(escaped_first_char("").is_none());
        let doc = json!({"a": 1, "b": 2});
        let key = escaped_first_char("a").unwrap();
        let out =
            object_with_duplicate_key(doc.as_object().unwrap(), "a", &key, &json!(1), &json!(3));
        assert_eq!(out, br#"{"a":1,"\u0061":3,"b":2}"#);
    }

    #[test]
    fn structural_boundaries_skip_strings() {
        let text = br#"{"a:b":[1,{"c":"{,"}]}"#;
        let cuts: Vec<&[u8]> = structural_boundaries(text)
            .into_iter()
            .map(|i| &text[..i])
            .collect();
        assert_eq!(
            cuts,
            [
                &br#"{"#[..],
                br#"{"a:b":"#,
                br#"{"a:b":["#,
                br#"{"a:b":[1,"#,
                br#"{"a:b":[1,{"#,
                br#"{"a:b":[1,{"c":"#,
            ]
        );
    }

    #[test]
    fn canaries_are_stable_and_distinct() {
        assert_eq!(canary(1, "a", 0), canary(1, "a", 0));
        assert_ne!(canary(1, "a", 0), canary(1, "a", 1));
        assert_ne!(canary(1, "a", 0), canary(2, "a", 0));
        assert_eq!(canary(1, "a", 0).len(), 16);
    }

    #[test]
    fn pointers_cover_every_object_and_member() {
        let doc = json!({"a": {"b/c": [ {"d": 1} ]}});
        assert_eq!(object_pointers(&doc), ["", "/a", "/a/b~1c/0"]);
        assert_eq!(member_pointers(&doc).len(), 3);
    }
}
