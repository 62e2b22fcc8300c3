//! proptest strategies shared by the guard's property tests.

use proptest::prelude::*;
use serde_json::{Map, Number, Value};

/// Any JSON value that serde_json can represent, nested a few levels.
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,6}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Text built from JSON tokens, valid and broken ones, so that both acceptance and every
/// kind of rejection are reached often.
pub fn json_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(&b"{"[..]),
        Just(&b"}"[..]),
        Just(&b"["[..]),
        Just(&b"]"[..]),
        Just(&b","[..]),
        Just(&b":"[..]),
        Just(&b" "[..]),
        Just(&b"\"a\""[..]),
        Just(&b"\"b\""[..]),
        Just(&b"\"\\u0061\""[..]),
        Just(&b"\"\\ud800\""[..]),
        Just(&b"\"\\ud83d\\ude00\""[..]),
        Just(&b"\"\xff\""[..]),
        Just(&b"\"\xc3\xa9\""[..]),
        Just(&b"0"[..]),
        Just(&b"-0"[..]),
        Just(&b"12"[..]),
        Just(&b"1.5e3"[..]),
        Just(&b"1e400"[..]),
        Just(&b"1e-400"[..]),
        Just(&b"18446744073709551616"[..]),
        Just(&b"01"[..]),
        Just(&b"true"[..]),
        Just(&b"null"[..]),
        Just(&b"nul"[..]),
        Just(&b"NaN"[..]),
        Just(&b"//"[..]),
        Just(&b"\xef\xbb\xbf"[..]),
    ];
    prop::collection::vec(token, 0..24).prop_map(|tokens| tokens.concat())
}

/// A valid body of a shipped fixture with a few bytes flipped, inserted or removed.
pub fn mutated(base: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = base.len().max(1);
    prop::collection::vec((0..len, any::<u8>(), 0..3u8), 0..4).prop_map(move |edits| {
        let mut bytes = base.clone();
        for (at, byte, op) in edits {
            let at = at.min(bytes.len());
            match op {
                0 if at < bytes.len() => bytes[at] = byte,
                1 => bytes.insert(at, byte),
                _ if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ => {}
            }
        }
        bytes
    })
}
