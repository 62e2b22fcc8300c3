//! Byte-level variants: raw number texts, strings that are not JSON text, whole bodies
//! broken in ways no schema can repair.

use serde_json::Value;

use super::Builder;
use crate::cases::{
    escape_token, member_pointers, splice, structural_boundaries, Expectation, Upstream,
};
use crate::corpus::Fixture;

/// Raw number texts spliced in at every member, mapped or not, projected or not. The
/// strict parser rejects all but `-0` and `1.0` whatever the schema (overflow, 2^64,
/// underflow, leading zero, the `NaN` and `Infinity` literals Python's and other lax
/// readers take for numbers); those two the schema decides.
const NUMBER_EDGES: [(&str, Expectation); 9] = [
    ("1e400", Expectation::Reject),
    ("-0", Expectation::Reference),
    ("18446744073709551616", Expectation::Reject),
    ("1.0", Expectation::Reference),
    ("1e-400", Expectation::Reject),
    ("01", Expectation::Reject),
    ("NaN", Expectation::Reject),
    ("Infinity", Expectation::Reject),
    ("-Infinity", Expectation::Reject),
];

/// number_edge: raw number text in place of every member's value.
pub(super) fn number_edges(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let origin = fixture.name.as_str();
    for (parent, name) in member_pointers(value) {
        let location = format!("{parent}/{}", escape_token(&name));
        for (text, expect) in NUMBER_EDGES {
            if let Some(bytes) = splice(value, &location, text.as_bytes()) {
                b.push(
                    "number_edge",
                    Some(origin),
                    &location,
                    text,
                    &fixture.request,
                    Upstream::Body(bytes),
                    Vec::new(),
                    expect,
                );
            }
        }
    }
}

/// bad_string_bytes: a string that is not JSON text (a canary inside) in place of every
/// string member's value.
pub(super) fn bad_string_bytes(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let origin = fixture.name.as_str();
    for (parent, name) in member_pointers(value) {
        let location = format!("{parent}/{}", escape_token(&name));
        if !value.pointer(&location).is_some_and(Value::is_string) {
            continue;
        }
        let token = b.canary("bad_string_bytes", origin, &location, 0);
        let quoted = |bad: &[u8]| [b"\"", token.as_bytes(), bad, b"\""].concat();
        let raws = [
            ("lone_surrogate", quoted(b"\\ud800")),
            ("lone_low_surrogate", quoted(b"\\udc00")),
            ("reversed_surrogate_pair", quoted(b"\\ude00\\ud83d")),
            ("high_surrogate_then_text", quoted(b"\\ud83dx")),
            ("invalid_utf8", quoted(b"\xff\xfe")),
            ("control_character", quoted(b"\n")),
        ];
        for (kind, raw) in raws {
            if let Some(bytes) = splice(value, &location, &raw) {
                b.push(
                    "bad_string_bytes",
                    Some(origin),
                    &location,
                    kind,
                    &fixture.request,
                    Upstream::Body(bytes),
                    vec![token.clone()],
                    Expectation::Reject,
                );
            }
        }
    }
}

/// Truncations kept per fixture, spread over its structural boundaries.
const MAX_TRUNCATIONS: usize = 32;

/// raw_bytes: the whole body broken in ways no schema can repair.
pub(super) fn raw_bytes(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let origin = fixture.name.as_str();
    let compact = serde_json::to_vec(value).unwrap_or_default();
    let end = format!("byte:{}", compact.len());
    let token = b.canary("raw_bytes", origin, "", 0);
    let html = format!(
        "<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1><p>approved: true {token}</p></body></html>"
    );
    let utf16: Vec<u8> = String::from_utf8_lossy(&compact)
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    let mut variants: Vec<(String, &str, Vec<u8>, Vec<String>)> = vec![
        (
            "byte:0".into(),
            "bom",
            [&b"\xef\xbb\xbf"[..], &compact].concat(),
            vec![],
        ),
        ("byte:0".into(), "utf16le", utf16, vec![]),
        (
            end.clone(),
            "trailing_garbage",
            [&compact[..], b"x"].concat(),
            vec![],
        ),
        (
            end,
            "concatenated",
            [&compact[..], &compact].concat(),
            vec![],
        ),
    ];
    let cuts = structural_boundaries(&compact);
    let kept: Vec<usize> = if cuts.len() > MAX_TRUNCATIONS {
        (0..MAX_TRUNCATIONS)
            .map(|k| cuts[k * cuts.len() / MAX_TRUNCATIONS])
            .collect()
    } else {
        cuts
    };
    for cut in kept {
        variants.push((
            format!("byte:{cut}"),
            "truncated",
            compact[..cut].to_vec(),
            vec![],
        ));
    }
    variants.extend([
        (
            "byte:0".into(),
            "html_error_page",
            html.into_bytes(),
            vec![token],
        ),
        ("byte:0".into(), "empty", Vec::new(), vec![]),
        (
            "byte:0".into(),
            "comment_prefix",
            [&b"/* comment */"[..], &compact].concat(),
            vec![],
        ),
        (
            "byte:0".into(),
            "single_quotes",
            compact
                .iter()
                .map(|c| if *c == b'"' { b'\'' } else { *c })
                .collect(),
            vec![],
        ),
    ]);
    if let Some((parent, name)) = member_pointers(value).into_iter().next() {
        let location = format!("{parent}/{}", escape_token(&name));
        if let Some(bytes) = splice(value, &location, b"NaN") {
            variants.push((location, "nan", bytes, vec![]));
        }
    }
    for (location, kind, bytes, canaries) in variants {
        b.push(
            "raw_bytes",
            Some(origin),
            &location,
            kind,
            &fixture.request,
            Upstream::Body(bytes),
            canaries,
            Expectation::Reject,
        );
    }
}
