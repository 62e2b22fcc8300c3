//! Valid re-encodings: an admitted body written again in ways that keep its meaning (white
//! space between every token, every string `\u`-escaped, `\/`, members permuted, other
//! number spellings). The reference must admit them with the same agent value; an adapter
//! that rejects one is over-strict (an `availability` finding).

use serde_json::Value;
use std::fmt::Write as _;

use super::Builder;
use crate::cases::{Expectation, Upstream};
use crate::corpus::Fixture;

/// How a value is written again.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Style {
    /// Written before and after every token (and around the whole body).
    pub space: &'static str,
    /// Every character of every string and member name as a `\u` escape.
    pub escape_all: bool,
    /// `/` written as `\/`.
    pub escape_solidus: bool,
    /// The members of every object in reverse order.
    pub reverse_members: bool,
    /// Non-integer numbers in upper-case exponent form with an explicit sign.
    pub exponent_numbers: bool,
}

/// The re-encodings tried, by id suffix.
pub(crate) const STYLES: [(&str, Style); 6] = [
    (
        "whitespace",
        Style {
            space: " \r\n\t",
            escape_all: false,
            escape_solidus: false,
            reverse_members: false,
            exponent_numbers: false,
        },
    ),
    (
        "unicode_escaped",
        Style {
            space: "",
            escape_all: true,
            escape_solidus: false,
            reverse_members: false,
            exponent_numbers: false,
        },
    ),
    (
        "solidus_escaped",
        Style {
            space: "",
            escape_all: false,
            escape_solidus: true,
            reverse_members: false,
            exponent_numbers: false,
        },
    ),
    (
        "members_permuted",
        Style {
            space: "",
            escape_all: false,
            escape_solidus: false,
            reverse_members: true,
            exponent_numbers: false,
        },
    ),
    (
        "number_spellings",
        Style {
            space: "",
            escape_all: false,
            escape_solidus: false,
            reverse_members: false,
            exponent_numbers: true,
        },
    ),
    (
        "all_at_once",
        Style {
            space: "\t\r\n ",
            escape_all: true,
            escape_solidus: true,
            reverse_members: true,
            exponent_numbers: true,
        },
    ),
];

/// reencoding: every style that changes the bytes of `value`, within `max_bytes`.
pub(super) fn reencodings(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let max_bytes = usize::try_from(b.contract.limits().max_bytes).unwrap_or(usize::MAX);
    let compact = serde_json::to_string(value).unwrap_or_default();
    for (name, style) in STYLES {
        let text = encode(value, &style);
        // A style that changes nothing here (no `/`, no fraction, one member) is skipped.
        if text == compact || text.len() > max_bytes {
            continue;
        }
        b.push(
            "reencoding",
            Some(&fixture.name),
            "",
            name,
            &fixture.request,
            Upstream::Body(text.into_bytes()),
            Vec::new(),
            Expectation::Admit,
        );
    }
}

/// `value` written in `style`.
pub(crate) fn encode(value: &Value, style: &Style) -> String {
    let mut out = String::new();
    out.push_str(style.space);
    write_value(value, style, &mut out);
    out.push_str(style.space);
    out
}

fn write_value(value: &Value, style: &Style, out: &mut String) {
    let space = style.space;
    match value {
        Value::Object(map) => {
            out.push('{');
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            if style.reverse_members {
                members.reverse();
            }
            for (i, (name, member)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(space);
                    out.push(',');
                }
                out.push_str(space);
                write_string(name, style, out);
                out.push_str(space);
                out.push(':');
                out.push_str(space);
                write_value(member, style, out);
            }
            out.push_str(space);
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(space);
                    out.push(',');
                }
                out.push_str(space);
                write_value(item, style, out);
            }
            out.push_str(space);
            out.push(']');
        }
        Value::String(text) => write_string(text, style, out),
        Value::Number(n) if style.exponent_numbers && n.is_f64() => {
            out.push_str(&exponent_spelling(n));
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A non-integer number as `M.ME+X` (or `E-X`), when that reads back as the same number.
fn exponent_spelling(n: &serde_json::Number) -> String {
    let plain = n.to_string();
    let Some(f) = n.as_f64() else { return plain };
    let text = format!("{f:E}");
    let text = match text.split_once('E') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}E+{exp}"),
        _ => text,
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Number(back)) if back.as_f64() == Some(f) => text,
        _ => plain,
    }
}

fn write_string(text: &str, style: &Style, out: &mut String) {
    if style.escape_all {
        out.push('"');
        for unit in text.encode_utf16() {
            let _ = write!(out, "\\u{unit:04x}");
        }
        out.push('"');
        return;
    }
    let quoted = serde_json::to_string(text).unwrap_or_default();
    if style.escape_solidus {
        out.push_str(&quoted.replace('/', "\\/"));
    } else {
        out.push_str(&quoted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_style_reads_back_as_the_same_value() {
        let value = json!({"a/b": "x\u{1F600}é/\n\"", "n": [1.5, -0.25, 3, 1e-7], "o": {"k": null, "t": true}});
        for (name, style) in STYLES {
            let text = encode(&value, &style);
            let back = airlock_guard::parse(text.as_bytes(), 64)
                .unwrap_or_else(|e| panic!("{name}: {e}: {text}"));
            assert_eq!(back, value, "{name}: {text}");
        }
        let escaped = encode(&value, &STYLES[1].1);
        assert!(
            escaped.contains("\\ud83d\\ude00"),
            "surrogate pair: {escaped}"
        );
        assert!(!escaped.contains('é'));
        assert!(encode(&value, &STYLES[2].1).contains("a\\/b"));
        assert!(encode(&value, &STYLES[4].1).contains("1.5E+0"));
        let spaced = encode(&value, &STYLES[0].1);
        assert!(spaced.starts_with(" \r\n\t{") && spaced.ends_with("} \r\n\t"));
    }
}
