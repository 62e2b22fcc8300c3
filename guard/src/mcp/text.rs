//! How the text blocks of an MCP result are held to `structuredContent`
//! ([`TextRule::Agree`] and [`TextRule::Consistent`]).

use std::collections::{HashMap, HashSet};
use std::hash::RandomState;

use crate::audit::{Diagnostic, Stage};
use crate::doc::{Node, Object};
use crate::parse::{parse_doc, ParseError};

#[cfg(doc)]
use super::TextRule;

/// A text block says what `structuredContent` says: it parses strictly to an equal value
/// (members in any order, numbers as written: `1` is not `1.0`).
pub(super) fn agree(
    index: usize,
    text: &str,
    structured: Node<'_>,
    max_depth: usize,
) -> Result<(), Diagnostic> {
    let at = format!("/result/content/{index}/text");
    let parsed = match parse_doc(text.as_bytes(), max_depth) {
        Ok(parsed) => parsed,
        Err(error) if looks_like_json(text) => {
            return Err(not_strict_json(index, &at, &error));
        }
        Err(_) => {
            return Err(Diagnostic::new(
                Stage::Decode,
                "text_agreement",
                format!(
                    "text block {index} is plain text, not JSON: with `text = \"agree\"` every \
                     text block must be the JSON of structuredContent (the server may write \
                     prose there: `text = \"consistent\"` or `\"ignore\"` does not read it)"
                ),
                format!("text block {index} is plain text, not JSON"),
            )
            .with_instance_path(at))
        }
    };
    if structured.same_node(parsed.root()) {
        return Ok(());
    }
    Err(disagrees(index, at))
}

/// What [`TextRule::Consistent`] compares every text block with, gathered once: a
/// response may hold many blocks and many members, and comparing each block with each
/// member made one response cost their product (a 1 MiB message, seconds).
pub(super) struct Agreement<'a> {
    structured: Node<'a>,
    members: Object<'a>,
    /// The string members' texts by length; a length shared by many, as a set.
    strings: HashMap<usize, Strings<'a>>,
    /// The members by [`Node::structural_hash`], made when a block first needs them.
    by_hash: Option<HashMap<u64, Vec<Node<'a>>>>,
    state: RandomState,
}

/// The string members of one length.
enum Strings<'a> {
    Few(Vec<&'a str>),
    Many(HashSet<&'a str>),
}

impl<'a> Agreement<'a> {
    /// A length shared by more string members than this is looked up in a set.
    const FEW: usize = 8;

    pub(super) fn new(structured: Node<'a>, members: Object<'a>) -> Self {
        let mut strings: HashMap<usize, Strings<'a>> = HashMap::new();
        for text in members.iter().filter_map(|(_, value)| value.as_str()) {
            match strings
                .entry(text.len())
                .or_insert_with(|| Strings::Few(Vec::new()))
            {
                Strings::Few(few) if few.len() < Self::FEW => few.push(text),
                Strings::Few(few) => {
                    let mut many: HashSet<&str> = few.drain(..).collect();
                    many.insert(text);
                    strings.insert(text.len(), Strings::Many(many));
                }
                Strings::Many(many) => {
                    many.insert(text);
                }
            }
        }
        Self {
            structured,
            members,
            strings,
            by_hash: None,
            state: RandomState::new(),
        }
    }

    /// Whether `text` is a string member, verbatim.
    fn verbatim(&self, text: &str) -> bool {
        match self.strings.get(&text.len()) {
            Some(Strings::Few(few)) => few.contains(&text),
            Some(Strings::Many(many)) => many.contains(text),
            None => false,
        }
    }

    /// Whether `parsed` (the text of `len` bytes) equals `structuredContent` or one of
    /// its members. Compared member by member while that costs about the block's own
    /// size (a few members, or one found early: no hashing, as most results need); past
    /// that, through the index, made once for the blocks to come.
    fn equal(&mut self, parsed: Node<'_>, len: usize) -> bool {
        if self.structured.same_node(parsed) {
            return true;
        }
        if self.by_hash.is_none() {
            let mut budget = 64 + len;
            let mut found = Some(false);
            for (_, member) in self.members.iter() {
                match member.same_node_within(parsed, &mut budget) {
                    Some(true) => return true,
                    Some(false) => {}
                    None => {
                        found = None;
                        break;
                    }
                }
            }
            if let Some(found) = found {
                return found;
            }
        }
        self.indexed(parsed)
    }

    /// Whether `parsed` equals a member, looked up in the index (made on first use).
    fn indexed(&mut self, parsed: Node<'_>) -> bool {
        let (state, members) = (&self.state, self.members);
        let by_hash = self.by_hash.get_or_insert_with(|| {
            let mut by_hash: HashMap<u64, Vec<Node<'a>>> = HashMap::new();
            for (_, value) in members.iter() {
                by_hash
                    .entry(value.structural_hash(state))
                    .or_default()
                    .push(value);
            }
            by_hash
        });
        by_hash
            .get(&parsed.structural_hash(state))
            .is_some_and(|candidates| candidates.iter().any(|value| value.same_node(parsed)))
    }

    /// A text block that is JSON agrees with `structuredContent` or one of its top-level
    /// members; one that is a string member verbatim agrees; prose is not read.
    pub(super) fn consistent(
        &mut self,
        index: usize,
        text: &str,
        max_depth: usize,
    ) -> Result<(), Diagnostic> {
        if self.verbatim(text) {
            return Ok(());
        }
        let at = format!("/result/content/{index}/text");
        let parsed = match parse_doc(text.as_bytes(), max_depth) {
            Ok(parsed) => parsed,
            // JSON a lenient reader takes but the strict one refuses: readers disagree.
            Err(error) if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() => {
                return Err(not_strict_json(index, &at, &error));
            }
            Err(_) => return Ok(()),
        };
        if self.equal(parsed.root(), text.len()) {
            return Ok(());
        }
        Err(disagrees(index, at))
    }
}

/// Whether `text` starts as a JSON object or array would (after white space): a text
/// meant as JSON, so a parse error in it is reported as such.
fn looks_like_json(text: &str) -> bool {
    matches!(
        text.trim_start_matches([' ', '\t', '\n', '\r'])
            .as_bytes()
            .first(),
        Some(b'{' | b'[' | b'"')
    )
}

fn not_strict_json(index: usize, at: &str, error: &ParseError) -> Diagnostic {
    Diagnostic::new(
        Stage::Decode,
        "text_agreement",
        format!(
            "text block {index} is not strict JSON ({}), so it cannot agree with \
             structuredContent",
            error.masked_message()
        ),
        format!("text block {index} is not strict JSON"),
    )
    .with_instance_path(at)
}

fn disagrees(index: usize, at: String) -> Diagnostic {
    Diagnostic::new(
        Stage::Decode,
        "text_agreement",
        format!("text block {index} says something else than structuredContent"),
        format!("text block {index} says something else than structuredContent"),
    )
    .with_instance_path(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    /// The verdicts of `consistent` on each text, for `structuredContent` `structured`.
    fn verdicts(structured: &Value, texts: &[String]) -> Vec<bool> {
        let body = structured.to_string();
        let doc = parse_doc(body.as_bytes(), 64).unwrap();
        let root = doc.root();
        let mut agreement = Agreement::new(root, root.as_object().unwrap());
        texts
            .iter()
            .enumerate()
            .map(|(i, text)| agreement.consistent(i, text, 64).is_ok())
            .collect()
    }

    #[test]
    fn many_blocks_agree_with_many_members_by_value() {
        // Twelve string members of one length (looked up in a set), arrays, objects.
        let mut structured = serde_json::Map::new();
        for i in 0..12 {
            structured.insert(format!("s{i}"), json!(format!("text-{i:02}")));
        }
        structured.insert("a".into(), json!([1, [2, {"x": null}]]));
        structured.insert("o".into(), json!({"p": 1, "q": [true]}));
        structured.insert("e".into(), json!([]));
        let structured = Value::Object(structured);
        let admitted: Vec<String> = [
            "text-00",
            "text-11",
            "text-07",
            r#"[1, [2, {"x": null}]]"#,
            r#"{"q": [true], "p": 1}"#,
            "[]",
            "prose the server wrote",
        ]
        .iter()
        .map(|t| (*t).to_owned())
        .chain([structured.to_string()])
        .collect();
        assert!(verdicts(&structured, &admitted).iter().all(|ok| *ok));
        let refused: Vec<String> = [
            r#"[1, [2, {"x": 0}]]"#,
            r#"{"q": [true], "p": 1.0}"#,
            r#"{"q": [true]}"#,
            r#"[1, [2, {"x": null}], 3]"#,
            r#""text-12""#,
            "[[]]",
        ]
        .iter()
        .map(|t| (*t).to_owned())
        .collect();
        assert!(verdicts(&structured, &refused).iter().all(|ok| !*ok));
    }

    /// 40 000 array members and a text block of 200 000 items: each block was compared
    /// with each member, counting the block's items every time (8·10⁹ steps; the time is
    /// measured in `benches/benches/mcp.rs`, group `consistent_text`).
    #[test]
    fn many_members_and_a_long_block_are_judged_once_each() {
        let structured: serde_json::Map<String, Value> =
            (0..40_000).map(|i| (format!("a{i}"), json!([]))).collect();
        let long = format!("[{}0]", "0,".repeat(199_999));
        let structured = Value::Object(structured);
        assert_eq!(verdicts(&structured, &[long]), [false]);
        assert_eq!(verdicts(&structured, &["[]".to_owned()]), [true]);
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3i64..3).prop_map(Value::from),
            Just(json!(1.0)),
            "[ab]{0,2}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map("[ab]{1}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// The index agrees with comparing the block with the whole and every member.
        #[test]
        fn the_index_finds_exactly_the_equal_members(
            members in proptest::collection::btree_map("[a-d]{1}", json_value(), 0..6),
            block in json_value(),
            pick in any::<prop::sample::Index>(),
        ) {
            let structured = Value::Object(members.clone().into_iter().collect());
            let picked = members.values().nth(pick.index(members.len().max(1)));
            let body = structured.to_string();
            let doc = parse_doc(body.as_bytes(), 64).unwrap();
            let root = doc.root();
            let object = root.as_object().unwrap();
            let mut agreement = Agreement::new(root, object);
            for block in [Some(&block), picked].into_iter().flatten() {
                let text = block.to_string();
                let parsed = parse_doc(text.as_bytes(), 64).unwrap();
                let naive = root.same_node(parsed.root())
                    || object.iter().any(|(_, member)| member.same_node(parsed.root()));
                prop_assert_eq!(agreement.equal(parsed.root(), text.len()), naive, "{}", text);
                let whole = root.same_node(parsed.root());
                prop_assert_eq!(whole || agreement.indexed(parsed.root()), naive, "{}", text);
            }
        }
    }
}
