//! The tape's unit tests: layout, lookups, equality, excerpts, display.

use super::excerpt::EXCERPT_BYTES;
use super::*;
use crate::parse::parse_doc;
use jsonschema::json;
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

/// The bytes a document holds besides the body it reads.
fn held(doc: &Document<'_>) -> usize {
    doc.words.capacity() * 4
        + doc.decoded.capacity()
        + doc.indexed.capacity() * 12
        + doc.order.capacity() * 4
}

#[test]
fn a_document_holds_at_most_three_times_its_body_whatever_its_shape() {
    let repeat = |item: &str, n: usize| format!("[{}]", vec![item; n].join(","));
    let members: Vec<String> = (0..20_000).map(|i| format!("\"{i:x}\":0")).collect();
    let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
    let shapes = [
        repeat("0", 100_000),
        repeat("{}", 100_000),
        format!("{{{}}}", members.join(",")),
        repeat(&deep, 200),
        repeat("{\"\\u0061\":0}", 20_000),
        repeat("\"\\n\"", 50_000),
        format!("\"{}\"", "\\n".repeat(100_000)),
        // Below the size where the tape is sized by counting.
        repeat("0", 1_000),
        repeat("\"\\n\"", 1_000),
    ];
    for body in &shapes {
        let doc = parse_doc(body.as_bytes(), 512).unwrap();
        let ratio = held(&doc) as f64 / body.len() as f64;
        assert!(ratio <= 3.0, "{ratio:.2}x for {}…", &body[..20]);
    }
}

#[test]
fn values_counts_every_member_value_and_item_once_and_parse_within_refuses_past_it() {
    for (body, values) in [
        ("0", 1),
        ("[]", 1),
        ("[0,[1,{}],{\"a\":[2]}]", 8),
        ("{\"a\":{\"b\":{\"c\":null}},\"d\":\"x\"}", 5),
    ] {
        assert_eq!(
            parse_doc(body.as_bytes(), 64).unwrap().root().values(),
            values,
            "{body}"
        );
        let mut budget = values + 2;
        assert!(crate::parse_within(body.as_bytes(), 64, &mut budget).is_ok());
        assert_eq!(
            budget, 2,
            "{body}: the budget is reduced by the values built"
        );
        let mut budget = values - 1;
        let err = crate::parse_within(body.as_bytes(), 64, &mut budget).unwrap_err();
        assert_eq!(
            err.kind(),
            &crate::ParseErrorKind::TooManyValues {
                max_values: values - 1
            }
        );
        assert_eq!(budget, values - 1, "a refused body spends nothing");
    }
}
