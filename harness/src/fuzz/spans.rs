//! Where an adapter fuzz input's value edits land: the values of a body (a JSON
//! string's text, a number or literal, a line-grammar value) as byte spans, and how a
//! word is written into one.

use serde_json::Value;

/// A span of the body a value edit works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) start: usize,
    pub(super) end: usize,
    /// Inside a JSON string's quotes: words are escaped.
    pub(super) quoted: bool,
}

pub(super) fn pick(spans: &[Span], n: u8) -> Option<Span> {
    match spans.len() {
        0 => None,
        len => Some(spans[usize::from(n) % len]),
    }
}

/// The values of a body: for JSON, every string's text (not member names) and every
/// number or literal; for a line grammar, every line's value after `separator`.
pub(super) fn value_spans(bytes: &[u8], separator: Option<&str>) -> Vec<Span> {
    let mut spans = Vec::new();
    if let Some(separator) = separator {
        let mut start = 0;
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            let end = start + line.len() - usize::from(line.ends_with(b"\n"));
            let body = &bytes[start..end];
            let body_end = end - usize::from(body.ends_with(b"\r"));
            if let Some(at) = find(&bytes[start..body_end], separator.as_bytes()) {
                spans.push(Span {
                    start: start + at + separator.len(),
                    end: body_end,
                    quoted: false,
                });
            }
            start += line.len();
        }
        return spans;
    }
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                let end = j.min(bytes.len());
                // A member's name is not a value: look-alike names come from byte and
                // token edits.
                let next = bytes[(end + 1).min(bytes.len())..]
                    .iter()
                    .find(|b| !b.is_ascii_whitespace());
                if next != Some(&b':') {
                    spans.push(Span {
                        start,
                        end,
                        quoted: true,
                    });
                }
                i = end + 1;
            }
            b'-' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' => {
                let start = i;
                while i < bytes.len()
                    && matches!(bytes[i], b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')
                {
                    i += 1;
                }
                spans.push(Span {
                    start,
                    end: i,
                    quoted: false,
                });
            }
            _ => i += 1,
        }
    }
    spans
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len().max(1))
        .position(|w| w == needle)
}

/// Where each line starts (a line-grammar body's structural boundaries).
pub(super) fn line_starts(bytes: &[u8]) -> Vec<usize> {
    std::iter::once(0)
        .chain(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect()
}

/// A word as a string's text, JSON-escaped (without the quotes).
pub(super) fn escape(word: &str) -> String {
    let quoted = Value::String(word.to_owned()).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// A word replacing a value: escaped inside quotes; outside them, as written when it
/// reads as a number or literal (`NaN`, `1e400`), else as a JSON string.
pub(super) fn encode(word: &str, quoted: bool) -> String {
    if quoted {
        return escape(word);
    }
    let bare = matches!(word, "NaN" | "Infinity" | "-Infinity")
        || serde_json::from_str::<Value>(word).is_ok()
        || word
            .bytes()
            .all(|b| matches!(b, b'-' | b'+' | b'.' | b'0'..=b'9' | b'e' | b'E' | b'x'));
    if bare {
        word.to_owned()
    } else {
        Value::String(word.to_owned()).to_string()
    }
}

pub(super) fn nth_key(params: &serde_json::Map<String, Value>, n: u8) -> Option<String> {
    match params.len() {
        0 => None,
        len => params.keys().nth(usize::from(n) % len).cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_spans_are_strings_numbers_and_literals_or_line_values() {
        let body = br#"{"a":"x\"y","n":-4.6e1,"t":true}"#;
        let texts: Vec<&[u8]> = value_spans(body, None)
            .iter()
            .map(|s| &body[s.start..s.end])
            .collect();
        assert_eq!(texts, [&b"x\\\"y"[..], b"-4.6e1", b"true"]);
        let lines = b"ref=refs/heads/main\r\ncommit=ab=c\n";
        let texts: Vec<&[u8]> = value_spans(lines, Some("="))
            .iter()
            .map(|s| &lines[s.start..s.end])
            .collect();
        assert_eq!(texts, [&b"refs/heads/main"[..], b"ab=c"]);
    }

    #[test]
    fn encoded_words_keep_numbers_bare_and_quote_text() {
        assert_eq!(encode("NaN", false), "NaN");
        assert_eq!(encode("46.0", false), "46.0");
        assert_eq!(encode("\"46\"", false), "\"46\"");
        assert_eq!(encode("CR-1", false), "\"CR-1\"");
        assert_eq!(encode("0x2E", false), "0x2E");
        assert_eq!(encode("a b", false), "\"a b\"");
        assert_eq!(encode("a\"b", true), "a\\\"b");
    }
}
