//! The parser's unit tests: every rejection by kind and offset, numbers, depth, escapes.

use super::*;
use serde_json::json;

fn kind(input: &[u8]) -> ParseErrorKind {
    parse(input, 8).unwrap_err().kind().clone()
}

#[test]
fn nested_document_parses_to_the_same_value_as_serde_json() {
    let text = br#" {"a": [1, -2, 3.5, true, false, null, "x\u00e9\n"], "b": {"c": {}}, "d": []} "#;
    let expected: Value = serde_json::from_slice(text).unwrap();
    assert_eq!(parse(text, 8).unwrap(), expected);
}

#[test]
fn member_order_is_preserved() {
    let value = parse(br#"{"z":1,"a":2,"m":3}"#, 8).unwrap();
    let keys: Vec<_> = value.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["z", "a", "m"]);
}

#[test]
fn duplicate_member_is_rejected_at_the_second_name() {
    let input = br#"{"approved": false, "approved": true}"#;
    let err = parse(input, 8).unwrap_err();
    assert_eq!(
        err.kind(),
        &ParseErrorKind::DuplicateMember("approved".into())
    );
    assert_eq!(err.offset(), 20);
}

#[test]
fn duplicate_member_spelled_with_an_escape_is_still_a_duplicate() {
    assert_eq!(
        kind(br#"{"a":1,"\u0061":2}"#),
        ParseErrorKind::DuplicateMember("a".into())
    );
}

#[test]
fn duplicate_member_past_the_scan_size_is_rejected_at_the_second_name() {
    let members: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
    let body = format!("{{{},\"k7\":0}}", members.join(","));
    let err = parse(body.as_bytes(), 8).unwrap_err();
    assert_eq!(err.kind(), &ParseErrorKind::DuplicateMember("k7".into()));
    assert_eq!(err.offset(), body.len() - 7);
    assert!(parse(body.replace(",\"k7\":0", ",\"k40\":0").as_bytes(), 8).is_ok());
}

#[test]
fn duplicate_member_deep_inside_is_rejected() {
    assert!(matches!(
        kind(br#"{"data":{"x":[{"k":1,"k":1}]}}"#),
        ParseErrorKind::DuplicateMember(_)
    ));
}

#[test]
fn ten_million_brackets_are_rejected_at_the_depth_limit_without_recursion() {
    let body = vec![b'['; 10_000_000];
    let err = parse(&body, 8).unwrap_err();
    assert_eq!(err.kind(), &ParseErrorKind::TooDeep { max_depth: 8 });
    assert_eq!(err.offset(), 8);
}

#[test]
fn depth_limit_is_inclusive() {
    assert!(parse(b"[[[[]]]]", 4).is_ok());
    assert!(parse(b"{\"a\":{\"b\":[[]]}}", 4).is_ok());
    assert_eq!(
        parse(b"[[[[[]]]]]", 4).unwrap_err().kind(),
        &ParseErrorKind::TooDeep { max_depth: 4 }
    );
    assert!(parse(b"1", 0).is_ok());
    assert!(parse(b"[]", 0).is_err());
}

#[test]
fn byte_order_mark_is_rejected() {
    assert_eq!(kind(b"\xEF\xBB\xBF{}"), ParseErrorKind::ByteOrderMark);
}

#[test]
fn invalid_utf8_inside_a_string_is_rejected_with_its_offset() {
    let err = parse(b"[\"ab\xFFcd\"]", 8).unwrap_err();
    assert_eq!(err.kind(), &ParseErrorKind::InvalidUtf8);
    assert_eq!(err.offset(), 4);
}

#[test]
fn lone_surrogates_are_rejected_and_pairs_are_decoded() {
    assert_eq!(kind(br#"["\ud800"]"#), ParseErrorKind::LoneSurrogate);
    assert_eq!(kind(br#"["\udc00"]"#), ParseErrorKind::LoneSurrogate);
    assert_eq!(kind(br#"["\ud800\u0041"]"#), ParseErrorKind::LoneSurrogate);
    assert_eq!(parse(br#""\ud83d\ude00""#, 8).unwrap(), json!("\u{1F600}"));
}

#[test]
fn trailing_bytes_and_concatenated_documents_are_rejected() {
    assert_eq!(kind(b"{} x"), ParseErrorKind::TrailingBytes);
    assert_eq!(kind(b"{}{}"), ParseErrorKind::TrailingBytes);
    assert!(parse(b"{} \n\t\r", 8).is_ok());
}

#[test]
fn javascript_extensions_are_rejected_by_name() {
    assert_eq!(kind(b"NaN"), ParseErrorKind::NonFiniteNumber);
    assert_eq!(kind(b"[-Infinity]"), ParseErrorKind::NonFiniteNumber);
    assert_eq!(kind(b"{\"a\":1 // c\n}"), ParseErrorKind::Comment);
    assert_eq!(kind(b"/* c */ {}"), ParseErrorKind::Comment);
    assert_eq!(kind(b"{'a':1}"), ParseErrorKind::SingleQuotedString);
    assert_eq!(kind(b"[1,]"), ParseErrorKind::UnexpectedByte(b']'));
}

#[test]
fn numbers_beyond_the_exact_range_are_rejected_not_rounded() {
    assert_eq!(
        kind(b"18446744073709551616"),
        ParseErrorKind::IntegerOutOfRange
    );
    assert_eq!(
        kind(b"-9223372036854775809"),
        ParseErrorKind::IntegerOutOfRange
    );
    assert_eq!(kind(b"1e400"), ParseErrorKind::NumberOverflow);
    assert_eq!(kind(b"-1e400"), ParseErrorKind::NumberOverflow);
    assert_eq!(kind(b"1e-400"), ParseErrorKind::NumberUnderflow);
    assert_eq!(parse(b"0e-400", 8).unwrap(), json!(0.0));
    assert_eq!(parse(b"18446744073709551615", 8).unwrap(), json!(u64::MAX));
    assert_eq!(parse(b"-9223372036854775808", 8).unwrap(), json!(i64::MIN));
}

#[test]
fn number_grammar_is_strict() {
    for bad in [
        &b"01"[..],
        b"-",
        b"1.",
        b".5",
        b"1e",
        b"+1",
        b"-01",
        b"1.e3",
    ] {
        assert!(parse(bad, 8).is_err(), "{:?}", String::from_utf8_lossy(bad));
    }
    assert_eq!(
        parse(b"-0", 8).unwrap(),
        serde_json::from_str::<Value>("-0").unwrap()
    );
    assert_eq!(parse(b"1.0", 8).unwrap(), json!(1.0));
    assert_eq!(parse(b"1E+2", 8).unwrap(), json!(100.0));
}

#[test]
fn raw_control_characters_in_strings_are_rejected_but_escaped_nul_is_kept() {
    assert_eq!(kind(b"\"a\nb\""), ParseErrorKind::ControlCharacterInString);
    assert_eq!(parse(br#""a\u0000b""#, 8).unwrap(), json!("a\u{0}b"));
}

#[test]
fn empty_and_truncated_bodies_are_rejected() {
    assert_eq!(kind(b""), ParseErrorKind::EmptyBody);
    assert_eq!(kind(b"  "), ParseErrorKind::EmptyBody);
    assert_eq!(kind(b"{\"a\":"), ParseErrorKind::UnexpectedEnd);
    assert_eq!(kind(b"[\"abc"), ParseErrorKind::UnexpectedEnd);
    assert_eq!(kind(b"tru"), ParseErrorKind::UnexpectedEnd);
    assert_eq!(kind(b"trux"), ParseErrorKind::UnexpectedByte(b'x'));
}

#[test]
fn masked_message_never_repeats_the_member_name() {
    let err = parse(br#"{"SECRET_CANARY":1,"SECRET_CANARY":2}"#, 8).unwrap_err();
    assert!(err.to_string().contains("SECRET_CANARY"));
    assert!(!err.masked_message().contains("SECRET_CANARY"));
}

fn plain_run_bytewise(bytes: &[u8]) -> Option<usize> {
    bytes
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
}

#[test]
fn plain_run_stops_at_each_special_byte_in_every_lane() {
    for special in [b'"', b'\\', 0x00, 0x1f] {
        for at in 0..20 {
            let mut bytes = vec![b'a'; 24];
            bytes[at] = special;
            // Bytes that are neighbours of the specials, or above 0x7f, never stop it.
            bytes[(at + 1) % 24] = [0x20, 0x21, 0x5d, 0x80, 0x9f, 0xff][at % 6];
            assert_eq!(plain_run(&bytes), Some(at), "{special:#x} at {at}");
        }
    }
    assert_eq!(
        plain_run(&[0x20, 0x7f, 0x80, 0xa2, 0xdc, 0xff, 0x21, 0x5b, 0x5d]),
        None
    );
}

proptest::proptest! {
    #[test]
    fn plain_run_agrees_with_the_bytewise_scan(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)) {
        proptest::prop_assert_eq!(plain_run(&bytes), plain_run_bytewise(&bytes));
    }
}
