//! The words an adapter fuzz input draws from, built from the contracts: what their
//! schemas name (enum values, `const`s, the literal runs of patterns, member names), the
//! bound parameters' values and their other spellings, line-grammar separators, canaries,
//! and the edges adapters get wrong (look-alikes, compatibility characters, number and
//! calendar spellings).

use airlock_guard::InputKind;
use serde_json::Value;
use std::collections::BTreeSet;

use crate::base::subject::Subject;

/// A fuzz dictionary: distinct words, in a stable order; the contracts' own, and the
/// edges every contract shares.
#[derive(Debug, Clone, Default)]
pub struct Dictionary {
    words: Vec<String>,
    edges: Vec<String>,
}

/// Canaries the dictionary plants: if one reaches an agent value the reference does not
/// carry, the adapter leaked rejected input.
pub(crate) const CANARIES: [&str; 2] = ["zqfuzzcanary7k3m", "zqfuzzcanary9p2x"];

/// The longest entry libFuzzer reads from a `-dict=` file, in bytes.
const LIBFUZZER_MAX_ENTRY: usize = 64;

/// Edges that no contract names but adapters get wrong.
const EDGES: &[&str] = &[
    // Invisible and compatibility characters, look-alikes.
    "\u{200b}",
    "\u{200d}",
    "\u{2060}",
    "\u{feff}",
    "\u{a0}",
    "\u{202f}",
    "\u{301}",
    "\u{212a}",
    "\u{fb01}",
    "\u{ff21}",
    "\u{ff10}",
    "\u{430}",
    "\u{435}",
    "\u{43e}",
    "\u{660}",
    "\u{966}",
    "\u{1d7ce}",
    "\t",
    " ",
    "\r",
    "\n",
    "\u{0}",
    "\u{1b}[31m",
    "\u{202e}",
    "\u{1f600}",
    "\u{2010}",
    "\u{2212}",
    "\u{2019}",
    "\u{201c}",
    // Number spellings.
    "NaN",
    "Infinity",
    "-Infinity",
    "-0",
    "1e400",
    "1e-400",
    "0.0",
    "1.0",
    "1E2",
    "0x2E",
    "046",
    "+46",
    "18446744073709551616",
    "9007199254740993",
    "true",
    "false",
    "null",
    "[]",
    "{}",
    // Calendar and time spellings.
    "2100-02-29",
    "2000-02-29",
    "2026-06-31",
    "2026-02-30",
    "2026-12-31T23:59:60Z",
    "T24:00:00",
    "t",
    "z",
    "+00:00",
    "-00:00",
    "+24:00",
    "+05:30",
    "-23:59",
    ",5",
    ".1234567890",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "1970-01-01T00:00:00Z",
    // Quoting, separators, escapes.
    "\"",
    "'",
    "\\",
    "\\u0041",
    "=",
    ": ",
    "refs/heads/",
    "&amp;",
    "%2F",
    "..",
    "/",
];

impl Dictionary {
    /// The dictionary of `subjects`: their contracts' words, then the edges.
    #[doc(hidden)]
    pub fn of(subjects: &[Subject]) -> Self {
        let mut words = BTreeSet::new();
        for subject in subjects {
            let contract = subject.guard.contract();
            schema_words(contract.schema().document(), &mut words);
            if let Some(vendor) = contract.vendor_schema() {
                schema_words(vendor.document(), &mut words);
            }
            if let InputKind::Lines(lines) = contract.input() {
                words.insert(lines.separator.clone());
                for key in &lines.keys {
                    words.insert(format!("{key}{}", lines.separator));
                }
            }
            words.insert(contract.tool().to_owned());
            for fixture in &subject.corpus.fixtures {
                fixture_words(&fixture.bytes, contract.input(), &mut words);
            }
            let requests = std::iter::once(&subject.corpus.request)
                .chain(subject.corpus.fixtures.iter().map(|f| &f.request));
            for request in requests {
                words.insert(request.request_id.clone());
                for value in request.params.values() {
                    spellings(value, &mut words);
                }
            }
        }
        words.retain(|w| !w.is_empty() && w.len() <= 256);
        let mut edges: Vec<String> = CANARIES
            .iter()
            .chain(EDGES)
            .map(|e| (*e).to_owned())
            .collect();
        edges.retain(|e| !words.contains(e));
        Self {
            words: words.into_iter().collect(),
            edges,
        }
    }

    /// Every word: the contracts', then the edges.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.words.iter().chain(&self.edges).map(String::as_str)
    }

    /// The word `index` names: an even index one of the contracts' words, an odd one an
    /// edge (half the draws each, however many words the contracts have).
    pub(crate) fn word(&self, index: u16) -> &str {
        let half = usize::from(index / 2);
        let (first, second) = match index % 2 {
            0 => (&self.words, &self.edges),
            _ => (&self.edges, &self.words),
        };
        let from = if first.is_empty() { second } else { first };
        match from.len() {
            0 => "",
            n => &from[half % n],
        }
    }

    /// The dictionary in libFuzzer's `-dict=` format: one `"…"` entry per line, each byte
    /// outside printable ASCII (and `"` and `\`) written `\xNN`; words longer than
    /// libFuzzer's 64-byte entries left out.
    pub fn libfuzzer(&self) -> String {
        let mut out =
            String::from("# Written by `airlock fuzz --write-dict`: the contracts' words.\n");
        for word in self.words().filter(|w| w.len() <= LIBFUZZER_MAX_ENTRY) {
            out.push('"');
            for &byte in word.as_bytes() {
                match byte {
                    b'"' | b'\\' => out.push_str(&format!("\\x{byte:02x}")),
                    0x20..=0x7e => out.push(char::from(byte)),
                    _ => out.push_str(&format!("\\x{byte:02x}")),
                }
            }
            out.push_str("\"\n");
        }
        out
    }
}

/// The words a schema names: enum values, `const`s, pattern literals, member names, and
/// date-time spellings where a `format` asks for one.
fn schema_words(schema: &Value, words: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("enum", Value::Array(values)) => {
                        values.iter().for_each(|v| spellings(v, words));
                    }
                    ("const", v) => spellings(v, words),
                    ("pattern", Value::String(pattern)) => pattern_literals(pattern, words),
                    ("properties", Value::Object(members)) => {
                        words.extend(members.keys().cloned());
                    }
                    ("required", Value::Array(names)) => {
                        words.extend(names.iter().filter_map(Value::as_str).map(str::to_owned));
                    }
                    _ => {}
                }
                schema_words(value, words);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| schema_words(v, words)),
        _ => {}
    }
}

/// A value and the spellings an adapter may take for it: re-cased, full-width, padded,
/// as a number or a string, without or with a `refs/heads/` prefix.
fn spellings(value: &Value, words: &mut BTreeSet<String>) {
    let text = match value {
        Value::String(text) => text.clone(),
        Value::Number(n) => {
            let text = n.to_string();
            words.insert(format!("{text}.0"));
            words.insert(format!("\"{text}\""));
            words.insert(format!("0{text}"));
            text
        }
        Value::Bool(b) => b.to_string(),
        _ => return,
    };
    if text.is_empty() || text.len() > 128 {
        return;
    }
    words.insert(text.to_uppercase());
    words.insert(text.to_lowercase());
    words.insert(format!(" {text}"));
    words.insert(format!("{text} "));
    words.insert(full_width(&text));
    if text.contains('/') {
        words.insert(text.replace('/', "%2F"));
    }
    match text.strip_prefix("refs/heads/") {
        Some(short) => {
            words.insert(short.to_owned());
        }
        None => {
            words.insert(format!("refs/heads/{text}"));
        }
    }
    words.insert(text);
}

/// The other spellings of a fixture's values an adapter may read as the same: each
/// date-time's lax forms, each path-like text percent-encoded.
fn fixture_words(bytes: &[u8], input: &InputKind, words: &mut BTreeSet<String>) {
    let mut texts = Vec::new();
    if let InputKind::Lines(lines) = input {
        let text = String::from_utf8_lossy(bytes);
        texts.extend(
            text.lines()
                .filter_map(|l| l.split_once(lines.separator.as_str()))
                .map(|(_, v)| v.to_owned()),
        );
    } else if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
        strings(&value, &mut texts);
    }
    for text in texts.iter().filter(|t| t.len() <= 128) {
        words.extend(time_spellings(text));
        if text.contains('/') {
            words.insert(text.replace('/', "%2F"));
        }
    }
}

fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// A date-time's spellings a hand-written parser may take for it (none when `text` is
/// not one): `t` and `z` in lower case, a space for `T`, a comma before the fraction,
/// `-00:00` and `+00:00` for `Z`, and its day's midnight written as the day before's
/// `T24:00:00`.
fn time_spellings(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let is_time = b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && text.parse::<airlock_guard::jiff::Timestamp>().is_ok();
    if !is_time {
        return Vec::new();
    }
    let mut out = vec![
        text.replace('T', "t").replace('Z', "z"),
        text.replacen('T', " ", 1),
    ];
    match text[19..].strip_prefix('.') {
        Some(fraction) => out.push(format!("{},{fraction}", &text[..19])),
        None => out.push(format!("{},0{}", &text[..19], &text[19..])),
    }
    if let Some(head) = text.strip_suffix('Z') {
        out.push(format!("{head}-00:00"));
        out.push(format!("{head}+00:00"));
    }
    if let Ok(date) = text[..10].parse::<airlock_guard::jiff::civil::Date>() {
        if let Ok(before) = date.yesterday() {
            out.push(format!(
                "{before}T24:00:00{}",
                &text[19..].trim_start_matches(|c: char| c == '.' || c.is_ascii_digit())
            ));
        }
    }
    out
}

/// The ways [`respell`] knows.
pub(crate) const RESPELLINGS: u8 = 16;

/// `text` in another spelling a lax reader may take for the same, or for a valid value
/// (a time's lax forms, `T24:00:00` among them,
/// re-cased, full-width, percent- or entity-encoded, padded, no-break spaces,
/// typographic hyphens, a branch with or without `refs/heads/`) (`how` modulo
/// [`RESPELLINGS`]); `None` when that way does not apply to it.
pub(crate) fn respell(text: &str, how: u8) -> Option<String> {
    let times = time_spellings(text);
    let out = match how % RESPELLINGS {
        way @ 0..=5 => times.get(usize::from(way)).cloned()?,
        6 => text.to_uppercase(),
        7 => text.to_lowercase(),
        8 => full_width(text),
        9 => text.replace('/', "%2F"),
        10 => text.replace('&', "&amp;"),
        11 => format!(" {text}"),
        12 => format!("{text} "),
        13 => text.replace(' ', "\u{a0}"),
        14 => text.replace('-', "\u{2010}"),
        _ => match text.strip_prefix("refs/heads/") {
            Some(short) => short.to_owned(),
            None => format!("refs/heads/{text}"),
        },
    };
    (out != text).then_some(out)
}

fn full_width(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '!'..='~' => char::from_u32(u32::from(c) - 0x21 + 0xff01).unwrap_or(c),
            c => c,
        })
        .collect()
}

/// The runs of literal characters of a regular expression (`^CR-[0-9]+$` gives `CR-`):
/// text a value must hold, and where a fuzz input starts from to pass the pattern.
fn pattern_literals(pattern: &str, words: &mut BTreeSet<String>) {
    let mut run = String::new();
    let mut chars = pattern.chars().peekable();
    let mut depth = 0usize;
    let flush = |run: &mut String, words: &mut BTreeSet<String>| {
        if run.chars().count() >= 2 {
            words.insert(std::mem::take(run));
        }
        run.clear();
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e) if e.is_ascii_punctuation() && depth == 0 => run.push(e),
                _ => flush(&mut run, words),
            },
            '[' => {
                flush(&mut run, words);
                depth += 1;
            }
            ']' => depth = depth.saturating_sub(1),
            '(' | ')' | '|' | '^' | '$' | '.' | '*' | '+' | '?' | '{' | '}' => {
                flush(&mut run, words);
                if c == '{' {
                    // A repeat count: skip it.
                    for d in chars.by_ref() {
                        if d == '}' {
                            break;
                        }
                    }
                }
            }
            c if depth == 0 => run.push(c),
            _ => {}
        }
    }
    flush(&mut run, words);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_literals_are_the_runs_outside_classes_and_repeats() {
        let mut words = BTreeSet::new();
        pattern_literals(r"^CR-[0-9]{1,10}$", &mut words);
        pattern_literals(r"^refs/heads/[A-Za-z0-9._/-]+$", &mut words);
        pattern_literals(r"^req\.[a-z]{4}(ab|cd)$", &mut words);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        assert_eq!(words, ["CR-", "ab", "cd", "refs/heads/", "req."]);
    }

    #[test]
    fn the_libfuzzer_dictionary_escapes_quotes_backslashes_and_non_ascii() {
        let dictionary = Dictionary {
            words: vec!["a\"b".into(), "\\".into(), "é".into(), "ok".into()],
            edges: Vec::new(),
        };
        let text = dictionary.libfuzzer();
        let entries: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(
            entries,
            [r#""a\x22b""#, r#""\x5c""#, r#""\xc3\xa9""#, r#""ok""#]
        );
    }

    #[test]
    fn a_date_time_has_its_lax_spellings() {
        assert_eq!(
            time_spellings("2026-12-03T08:00:00.5Z"),
            [
                "2026-12-03t08:00:00.5z",
                "2026-12-03 08:00:00.5Z",
                "2026-12-03T08:00:00,5Z",
                "2026-12-03T08:00:00.5-00:00",
                "2026-12-03T08:00:00.5+00:00",
                "2026-12-02T24:00:00Z",
            ]
        );
        assert!(time_spellings("2026-12-03").is_empty());
        assert!(time_spellings("not a time at all, no").is_empty());
    }

    #[test]
    fn spellings_of_a_bound_value_include_its_other_forms() {
        let mut words = BTreeSet::new();
        spellings(&Value::from("refs/heads/main"), &mut words);
        spellings(&Value::from(46), &mut words);
        for word in [
            "main",
            "REFS/HEADS/MAIN",
            "refs/heads/main ",
            "46.0",
            "\"46\"",
            "046",
            "４６",
        ] {
            assert!(words.contains(word), "{word:?} missing from {words:?}");
        }
    }
}
