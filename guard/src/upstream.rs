//! Input kinds `vendor` and `lines`: upstreams that do not speak the envelope.
//!
//! A **vendor** document (a REST API's own broad JSON) is judged by its own schema, then
//! the contract's `data` is built member by member from it: a JSON pointer into the
//! document and at most one normalisation from a fixed set. Declared failure rules turn a
//! vendor error shape into a failure code. **Lines** (a command's output) are read under a
//! strict line grammar — declared keys, each exactly once, no other line, bounded lines, a
//! declared line ending, no BOM, NUL, ANSI escape or other control character — into an
//! object of strings, which the same mapping may then normalise.
//!
//! Either way the guard builds the envelope itself (`tool` from the contract, `request_id`
//! from the request, `outcome: success`) and judges it with the contract's closed schema,
//! binding, checks and projection, exactly as an upstream envelope. Nothing of the source
//! that is not mapped exists in it.

use std::sync::Arc;

use jiff::SignedDuration;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::audit::{bounded, decode_rejection, Diagnostic};
use crate::doc::Node;
use crate::pointer::Pointer;
use crate::projection::ErrorCode;
use crate::schema::CompiledSchema;

/// One member of `data`, taken from the source document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// The member of `data` it fills.
    pub field: String,
    /// Where in the source document (a vendor document, or the object of a command's
    /// lines: `/Key`) its value is.
    pub from: Pointer,
    /// The one normalisation applied (default none: the value as it is).
    pub normalise: Normalise,
    /// Whether the source may lack it (then `data` lacks it too). Default false: a missing
    /// source member is a rejection naming the pointer (a field renamed upstream fails
    /// closed).
    pub optional: bool,
}

/// The fixed set of normalisations a mapping may apply.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Normalise {
    /// The value as it is.
    None,
    /// A decimal string (`"42"`, `"-7"`; no sign `+`, no leading zero, no space, at most
    /// 2^53) to an integer.
    IntegerFromString,
    /// An ASCII string lower-cased (`"SUCCESS"` → `"success"`); a non-ASCII string is
    /// refused, since lower-casing it could make a look-alike.
    Lowercase,
    /// A string looked up in a table (`{"SUCCESS": "succeeded"}`); a string not in it is
    /// refused.
    Table(Map<String, Value>),
    /// An RFC 3339 time with any offset rewritten in UTC (`2026-12-03T09:00:00+01:00` →
    /// `2026-12-03T08:00:00Z`).
    Rfc3339Utc,
    /// Integer seconds since the Unix epoch as an RFC 3339 UTC time.
    Rfc3339FromEpochSeconds,
}

/// A vendor error shape: when the document has `at` (and, if given, it equals `equals`),
/// the agent gets the failure `code`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureRule {
    /// The pointer tested.
    pub at: Pointer,
    /// The value it must have; `None`: present at all.
    pub equals: Option<Value>,
    /// The failure code.
    pub code: ErrorCode,
}

/// How a vendor document becomes the envelope (`[input] kind = "vendor"`).
///
/// It holds its vendor schema compiled: a vendor input cannot exist without the schema
/// that judges its documents, so the guard cannot map a document nothing judged. Built
/// only by loading a contract.
#[derive(Debug, Clone)]
pub struct VendorInput {
    /// The vendor schema's file in the contract folder.
    pub schema_file: String,
    /// The members of `data`.
    pub map: Vec<Mapping>,
    /// Failure rules, in order: the first that matches decides.
    pub failure: Vec<FailureRule>,
    /// `schema_file`, compiled.
    pub(crate) schema: Arc<CompiledSchema>,
}

impl VendorInput {
    /// The vendor schema, compiled: every document is judged by it before any rule or
    /// mapping reads it.
    pub fn schema(&self) -> &CompiledSchema {
        &self.schema
    }
}

/// Equal when the file, the mappings, the rules and the schema's digest are.
impl PartialEq for VendorInput {
    fn eq(&self, other: &Self) -> bool {
        self.schema_file == other.schema_file
            && self.map == other.map
            && self.failure == other.failure
            && self.schema.sha256() == other.schema.sha256()
    }
}

impl Eq for VendorInput {}

/// The line ending a command's output uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum LineEnding {
    /// `\n`
    #[serde(rename = "\n")]
    Lf,
    /// `\r\n`
    #[serde(rename = "\r\n")]
    CrLf,
}

/// A command-output grammar (`[input] kind = "lines"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinesInput {
    /// Between key and value: `=` (`key=value`) or `: ` (`key: value`).
    pub separator: String,
    /// Every line ends with it, the last one included.
    pub line_ending: LineEnding,
    /// The longest line, in bytes, its ending aside.
    pub max_line_bytes: usize,
    /// The declared keys: each exactly once, no other line.
    pub keys: Vec<String>,
    /// How the object of strings becomes `data` (none: the object itself).
    pub map: Vec<Mapping>,
}

/// The failure code of the first rule the vendor document matches.
pub(crate) fn failure_code(rules: &[FailureRule], doc: Node<'_>) -> Option<ErrorCode> {
    rules.iter().find_map(|rule| {
        let found = doc.resolve(&rule.at)?;
        match &rule.equals {
            None => Some(rule.code),
            Some(expected) => found.same_as(expected).then_some(rule.code),
        }
    })
}

/// The `data` object the mappings build from `source`.
pub(crate) fn map_data(
    map: &[Mapping],
    source: Node<'_>,
) -> Result<Map<String, Value>, Diagnostic> {
    let mut data = Map::new();
    for mapping in map {
        let Some(found) = source.resolve(&mapping.from) else {
            if mapping.optional {
                continue;
            }
            return Err(decode_rejection(
                "mapping",
                mapping.from.as_str(),
                format!(
                    "the source has no {} (mapped to data.{}): a member renamed or gone \
                     upstream fails closed",
                    mapping.from, mapping.field
                ),
                Some(format!(
                    "the source has no member mapped to data.{}",
                    mapping.field
                )),
            ));
        };
        let value = normalise(&mapping.normalise, found).map_err(|why| {
            decode_rejection(
                "normalise",
                mapping.from.as_str(),
                format!(
                    "{} (mapped to data.{}) {why}: {}",
                    mapping.from,
                    mapping.field,
                    bounded(&found)
                ),
                Some(format!(
                    "{} (mapped to data.{}) {why}",
                    mapping.from, mapping.field
                )),
            )
        })?;
        data.insert(mapping.field.clone(), value);
    }
    Ok(data)
}

fn normalise(how: &Normalise, value: Node<'_>) -> Result<Value, &'static str> {
    let text = || value.as_str().ok_or("is not a string");
    match how {
        Normalise::None => Ok(value.to_value()),
        Normalise::IntegerFromString => {
            let text = text()?;
            let digits = text.strip_prefix('-').unwrap_or(text);
            let canonical = !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && (digits == "0" || !digits.starts_with('0'))
                && text != "-0";
            let n: i64 = canonical
                .then(|| text.parse().ok())
                .flatten()
                .ok_or("is not a decimal integer string")?;
            if n.unsigned_abs() > 1 << 53 {
                return Err("is past 2^53");
            }
            Ok(Value::from(n))
        }
        Normalise::Lowercase => {
            let text = text()?;
            if !text.is_ascii() {
                return Err("is not ASCII (lower-casing it could make a look-alike)");
            }
            if !text.bytes().all(|b| b.is_ascii_graphic() || b == b' ') {
                return Err("holds a control character");
            }
            Ok(Value::String(text.to_ascii_lowercase()))
        }
        Normalise::Table(table) => table
            .get(text()?)
            .cloned()
            .ok_or("is not one of the table's values"),
        Normalise::Rfc3339Utc => {
            let text = text()?;
            if !is_rfc3339(text) {
                return Err("is not an RFC 3339 time");
            }
            let (local, offset) = civil_and_offset(text).ok_or("is not a valid time")?;
            let time = local
                .checked_sub(offset)
                .map_err(|_| "is outside the years 0001-9999 in UTC")?;
            utc(time)
        }
        Normalise::Rfc3339FromEpochSeconds => {
            let Some(n) = value.as_number() else {
                return Err("is not an integer");
            };
            let seconds = n.as_i64().ok_or("is not an integer")?;
            let epoch = jiff::civil::date(1970, 1, 1).at(0, 0, 0, 0);
            let time = epoch
                .checked_add(SignedDuration::from_secs(seconds))
                .map_err(|_| "is outside the years 0001-9999 in UTC")?;
            utc(time)
        }
    }
}

/// The civil time and the offset of an RFC 3339 text already checked by [`is_rfc3339`];
/// `None` for a day its month does not have (Feb 29 of a common year, Apr 31, day 00).
///
/// Computed on civil times rather than `jiff::Timestamp`, whose range stops at
/// 9999-12-30T22:00Z: every UTC instant of the years 0001–9999 is representable here.
fn civil_and_offset(text: &str) -> Option<(jiff::civil::DateTime, SignedDuration)> {
    let b = text.as_bytes();
    let number = |range: std::ops::Range<usize>| {
        b[range]
            .iter()
            .fold(0i32, |n, d| n * 10 + i32::from(d - b'0'))
    };
    let mut nanos = 0;
    let mut at = 19;
    if b[at] == b'.' {
        let digits = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        nanos = number(at + 1..at + 1 + digits) * 10i32.pow(9 - digits as u32);
        at += 1 + digits;
    }
    let offset = match b[at] {
        b'Z' => 0,
        sign => {
            let minutes = i64::from(number(at + 1..at + 3) * 60 + number(at + 4..at + 6));
            if sign == b'-' {
                -minutes
            } else {
                minutes
            }
        }
    };
    let local = jiff::civil::DateTime::new(
        i16::try_from(number(0..4)).ok()?,
        i8::try_from(number(5..7)).ok()?,
        i8::try_from(number(8..10)).ok()?,
        i8::try_from(number(11..13)).ok()?,
        i8::try_from(number(14..16)).ok()?,
        i8::try_from(number(17..19)).ok()?,
        nanos,
    )
    .ok()?;
    Some((local, SignedDuration::from_mins(offset)))
}

/// `time` (a civil time in UTC) written as RFC 3339; refused when its year is outside
/// 0001–9999 (RFC 3339 has four-digit years only). The fraction keeps its significant
/// digits only (`.5`, not `.500`), none when it is zero.
fn utc(time: jiff::civil::DateTime) -> Result<Value, &'static str> {
    if !(1..=9999).contains(&time.year()) {
        return Err("is outside the years 0001-9999 in UTC");
    }
    let mut text = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        time.year(),
        time.month(),
        time.day(),
        time.hour(),
        time.minute(),
        time.second()
    );
    let nanos = time.subsec_nanosecond();
    if nanos != 0 {
        text.push('.');
        text.push_str(format!("{nanos:09}").trim_end_matches('0'));
    }
    text.push('Z');
    Ok(Value::String(text))
}

/// RFC 3339's `date-time`, strictly: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of 1 to
/// 9 digits, and `Z` or `±HH:MM` (hours 00–23, minutes 00–59). Upper-case `T` and `Z`
/// only; no leap second (`:60` cannot be written in UTC without losing it); ISO 8601's
/// other spellings (`T0832`, `+0100`, `+01`, `,5`) are refused. The calendar (month
/// lengths, leap years) is left to the parser.
pub(crate) fn is_rfc3339(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range.clone())
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let two = |at: usize| u32::from(b[at] - b'0') * 10 + u32::from(b[at + 1] - b'0');
    let shape = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !shape || two(11) > 23 || two(14) > 59 || two(17) > 59 {
        return false;
    }
    let mut at = 19;
    if b[at] == b'.' {
        let end = b[at + 1..]
            .iter()
            .position(|c| !c.is_ascii_digit())
            .map_or(b.len(), |n| at + 1 + n);
        if !(1..=9).contains(&(end - at - 1)) {
            return false;
        }
        at = end;
    }
    match &b[at..] {
        [b'Z'] => true,
        [b'+' | b'-', _, _, b':', _, _] => {
            digits(at + 1..at + 3)
                && digits(at + 4..at + 6)
                && two(at + 1) <= 23
                && two(at + 4) <= 59
        }
        _ => false,
    }
}

/// Characters that change how text reads without being seen: zero-width characters,
/// bidirectional overrides and isolates (Trojan Source), line and paragraph separators,
/// the soft hyphen, a byte order mark past the start, interlinear annotations, tag
/// characters, variation selectors, the combining grapheme joiner and the Hangul fillers.
/// Command output has no business holding them, and every report escapes them.
pub fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}'
        | '\u{E0000}'..='\u{E007F}' | '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}'
        | '\u{034F}' | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}')
}

/// `text` safe to print on a terminal: control characters (C0, DEL, C1: escape
/// sequences, bells, carriage returns, line feeds), bidirectional overrides and other
/// [`invisible`] characters are written as `\u{…}` escapes; a backslash is doubled so an
/// escape cannot be forged.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    use std::fmt::Write as _;
    let unsafe_char = |c: char| c.is_control() || c == '\\' || invisible(c);
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if unsafe_char(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `text` as it is, unless it holds a character a terminal or a renderer would act on
/// (control, bidirectional, invisible): then [`printable`] (each such character and
/// every backslash escaped, so an escape cannot be forged). Ordinary text, backslashes
/// included, is shown exactly.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().any(|c| c.is_control() || invisible(c)) {
        printable(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Where a declared key's value sits in the decoded object: a JSON pointer, so a key that
/// holds `/` or `~` is escaped (`a/b` is `/a~1b`, not member `b` of member `a`).
fn key_path(key: &str) -> String {
    format!("/{}", Pointer::escape_token(key))
}

/// Read a command's output under `grammar`: the object of its keys' values (strings, in
/// the declared order).
pub(crate) fn read_lines(
    grammar: &LinesInput,
    body: &[u8],
) -> Result<Map<String, Value>, Diagnostic> {
    if body.starts_with(b"\xEF\xBB\xBF") {
        return Err(decode_rejection(
            "encoding",
            "",
            "the output starts with a byte order mark",
            None,
        ));
    }
    let text = std::str::from_utf8(body).map_err(|e| {
        let message = format!("the output is not UTF-8 (byte {})", e.valid_up_to());
        decode_rejection("encoding", "", message, None)
    })?;
    if let Some(at) =
        text.find(|c: char| (c.is_control() && c != '\n' && c != '\r') || invisible(c))
    {
        let c = text[at..].chars().next().unwrap_or('\0');
        let what = match c {
            '\u{1b}' => "an ANSI escape",
            '\0' => "a NUL",
            c if invisible(c) => "an invisible or bidirectional formatting character",
            _ => "a control character",
        };
        let message = format!("the output holds {what} (U+{:04X}) at byte {at}", c as u32);
        return Err(decode_rejection("control_character", "", message, None));
    }
    let ending = match grammar.line_ending {
        LineEnding::Lf => "\n",
        LineEnding::CrLf => "\r\n",
    };
    if text.is_empty() {
        return Err(decode_rejection("lines", "", "the output is empty", None));
    }
    let Some(complete) = text.strip_suffix(ending) else {
        let message = "the output does not end with the declared line ending (truncated?)";
        return Err(decode_rejection("line_ending", "", message, None));
    };
    let mut values: Vec<Option<String>> = vec![None; grammar.keys.len()];
    for (index, line) in complete.split(ending).enumerate() {
        let number = index + 1;
        if line.contains(['\r', '\n']) {
            let message = format!("line {number} ends otherwise than the declared line ending");
            return Err(decode_rejection("line_ending", "", message, None));
        }
        if line.len() > grammar.max_line_bytes {
            let message = format!(
                "line {number} is {} bytes, past max_line_bytes = {}",
                line.len(),
                grammar.max_line_bytes
            );
            return Err(decode_rejection("max_line_bytes", "", message, None));
        }
        let Some((key, value)) = line.split_once(grammar.separator.as_str()) else {
            return Err(decode_rejection(
                "line",
                "",
                format!(
                    "line {number} is not `key{}value`: {}",
                    grammar.separator,
                    bounded(&format!("{line:?}"))
                ),
                Some(format!(
                    "line {number} is not `key{}value`",
                    grammar.separator
                )),
            ));
        };
        let Some(slot) = grammar.keys.iter().position(|k| k == key) else {
            return Err(decode_rejection(
                "key",
                "",
                format!(
                    "line {number} has the key {}, not one of the declared keys",
                    bounded(&format!("{key:?}"))
                ),
                Some(format!("line {number} has a key that is not declared")),
            ));
        };
        if value.trim() != value {
            let message = format!("line {number} ({key}): white space around the value");
            return Err(decode_rejection("value", &key_path(key), message, None));
        }
        if values[slot].replace(value.to_owned()).is_some() {
            let message = format!("line {number}: the key {key} appears twice");
            return Err(decode_rejection(
                "duplicate_key",
                &key_path(key),
                message,
                None,
            ));
        }
    }
    let mut object = Map::new();
    for (key, value) in grammar.keys.iter().zip(values) {
        let Some(value) = value else {
            let message = format!("the key {key} is missing");
            return Err(decode_rejection(
                "missing_key",
                &key_path(key),
                message,
                None,
            ));
        };
        object.insert(key.clone(), Value::String(value));
    }
    Ok(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_doc;

    fn grammar() -> LinesInput {
        LinesInput {
            separator: "=".into(),
            line_ending: LineEnding::Lf,
            max_line_bytes: 64,
            keys: vec!["ActiveState".into(), "MainPID".into()],
            map: Vec::new(),
        }
    }

    #[test]
    fn declared_keys_each_once_are_read_in_declared_order() {
        let object = read_lines(&grammar(), b"MainPID=812\nActiveState=active\n").unwrap();
        assert_eq!(
            Value::Object(object).to_string(),
            r#"{"ActiveState":"active","MainPID":"812"}"#
        );
    }

    #[test]
    fn every_stray_byte_or_line_is_a_rejection() {
        for (body, keyword) in [
            (
                &b"Welcome to host!\nActiveState=active\nMainPID=1\n"[..],
                "line",
            ),
            (b"ActiveState=active\nMainPID=1\nWarning=x\n", "key"),
            (b"ActiveState=active\nActiveState=failed\n", "duplicate_key"),
            (b"ActiveState=active\n", "missing_key"),
            (b"ActiveState=active\nMainPlD=1\n", "key"),
            (b"ActiveState=active\r\nMainPID=1\r\n", "line_ending"),
            (b"ActiveState=active \nMainPID=1\n", "value"),
            (
                b"ActiveState=\x1b[32mactive\x1b[0m\nMainPID=1\n",
                "control_character",
            ),
            (b"ActiveState=active\nMainPID=1", "line_ending"),
            (b"\xEF\xBB\xBFActiveState=active\nMainPID=1\n", "encoding"),
            (b"ActiveState=act\xffive\nMainPID=1\n", "encoding"),
            (b"", "lines"),
        ] {
            let d = read_lines(&grammar(), body).unwrap_err();
            assert_eq!(d.keyword(), keyword, "{:?}", String::from_utf8_lossy(body));
        }
        // Invisible and bidirectional formatting characters (found in review: a right-to-left
        // override, a zero-width space, a line separator, a BOM mid-value).
        for c in [
            '\u{202E}',
            '\u{200B}',
            '\u{2028}',
            '\u{FEFF}',
            '\u{2066}',
            '\u{E0041}',
        ] {
            let body = format!("ActiveState=act{c}ive\nMainPID=1\n");
            let d = read_lines(&grammar(), body.as_bytes()).unwrap_err();
            assert_eq!(d.keyword(), "control_character", "U+{:04X}", c as u32);
        }
        // The Cyrillic look-alike: `MainPІD` is not a declared key.
        let d = read_lines(&grammar(), "ActiveState=a\nMainPІD=1\n".as_bytes()).unwrap_err();
        assert_eq!(d.keyword(), "key");
        let long = format!("ActiveState={}\nMainPID=1\n", "a".repeat(60));
        assert_eq!(
            read_lines(&grammar(), long.as_bytes())
                .unwrap_err()
                .keyword(),
            "max_line_bytes"
        );
    }

    /// A key holding `/` or `~` is one pointer token: `a/b` is not member `b` of member
    /// `a`, and `a~1b` is not the key `a/b` (found in review: the paths were written raw).
    #[test]
    fn a_rejections_path_escapes_the_key_as_a_pointer_token() {
        let grammar = LinesInput {
            keys: vec!["a/b".into(), "a~1b".into()],
            ..grammar()
        };
        for (body, keyword, path) in [
            (&b"a~1b=x\n"[..], "missing_key", "/a~1b"),
            (b"a/b=x\n", "missing_key", "/a~01b"),
            (b"a/b=x\na/b=y\n", "duplicate_key", "/a~1b"),
            (b"a/b=x\na~1b= y\n", "value", "/a~01b"),
        ] {
            let d = read_lines(&grammar, body).unwrap_err();
            assert_eq!(d.keyword(), keyword);
            assert_eq!(
                d.instance_path(),
                Some(path),
                "{:?}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn normalisations_are_strict() {
        let n = |how: &Normalise, text: &str| {
            normalise(how, parse_doc(text.as_bytes(), 4).unwrap().root())
        };
        assert_eq!(
            n(&Normalise::IntegerFromString, r#""42""#),
            Ok(Value::from(42))
        );
        assert_eq!(
            n(&Normalise::IntegerFromString, r#""-7""#),
            Ok(Value::from(-7))
        );
        for bad in [
            r#""042""#, r#""+1""#, r#"" 1""#, r#""1.0""#, r#""-0""#, "1", r#""""#,
        ] {
            assert!(n(&Normalise::IntegerFromString, bad).is_err(), "{bad}");
        }
        assert_eq!(
            n(&Normalise::Lowercase, r#""SUCCESS""#),
            Ok(Value::from("success"))
        );
        assert!(n(&Normalise::Lowercase, r#""SUCCESS\u0130""#).is_err());
        assert_eq!(
            n(&Normalise::Rfc3339Utc, r#""2026-12-03T09:00:00+01:00""#),
            Ok(Value::from("2026-12-03T08:00:00Z"))
        );
        assert!(n(&Normalise::Rfc3339Utc, r#""2026-12-03 09:00:00+01:00""#).is_err());
        assert!(n(&Normalise::Rfc3339Utc, r#""Thu 2026-12-03 08:00:00 UTC""#).is_err());
        // ISO 8601 offsets that RFC 3339 does not allow (found by the harness's
        // lines-value class: `time:offset_without_colon`).
        for bad in [
            r#""2026-12-03T09:00:00+0100""#,
            r#""2026-12-03T09:00:00+01""#,
            r#""2026-12-03T09:00:00.5+0100""#,
        ] {
            assert!(n(&Normalise::Rfc3339Utc, bad).is_err(), "{bad}");
        }
        // ISO 8601's basic and reduced forms, a comma fraction, offsets out of range, a
        // leap second, lower case, years that leave RFC 3339 in UTC (found in review).
        for bad in [
            r#""2026-12-03T0832+01:00""#,
            r#""2026-12-03T083235+01:00""#,
            r#""2026-12-03T08:32+01:00""#,
            r#""2026-12-03T08:32:35,5+01:00""#,
            r#""2026-12-03T08:32:35+24:00""#,
            r#""2026-12-03T08:32:35+01:60""#,
            r#""2026-12-03T24:00:00Z""#,
            r#""2016-12-31T23:59:60Z""#,
            r#""2026-12-03t08:32:35z""#,
            r#""2026-12-03T08:32:35.Z""#,
            r#""2026-12-03T08:32:35.1234567890Z""#,
            r#""0000-01-01T00:00:00+01:00""#,
            r#""2026-02-30T00:00:00Z""#,
            r#""2026-12-03T08:32:35Z ""#,
        ] {
            assert!(n(&Normalise::Rfc3339Utc, bad).is_err(), "{bad}");
        }
        assert_eq!(
            n(
                &Normalise::Rfc3339Utc,
                r#""9999-12-30T12:59:59.123456789Z""#
            ),
            Ok(Value::from("9999-12-30T12:59:59.123456789Z"))
        );
        assert_eq!(
            n(&Normalise::Rfc3339Utc, r#""0001-01-01T00:30:00+00:30""#),
            Ok(Value::from("0001-01-01T00:00:00Z"))
        );
        assert!(n(&Normalise::Rfc3339FromEpochSeconds, "-62167219201").is_err());
        // Half a second before year 1 in UTC (found in review: seconds truncate to 0).
        assert!(n(&Normalise::Rfc3339Utc, r#""0001-01-01T00:00:59.5+00:01""#).is_err());
        assert!(n(&Normalise::Rfc3339FromEpochSeconds, "253402300800").is_err());
        // The last day of year 9999 (jiff's `Timestamp` stops at 9999-12-30T22:00Z, which
        // refused it before), and an offset that carries the instant past it.
        for (text, utc) in [
            (
                r#""9999-12-31T23:59:59.999999999Z""#,
                "9999-12-31T23:59:59.999999999Z",
            ),
            (r#""9999-12-31T12:00:00-11:59""#, "9999-12-31T23:59:00Z"),
            (r#""9999-12-30T22:00:01Z""#, "9999-12-30T22:00:01Z"),
            (r#""0001-01-01T00:00:00Z""#, "0001-01-01T00:00:00Z"),
            (r#""2000-02-29T23:30:00-01:00""#, "2000-03-01T00:30:00Z"),
            (
                r#""2024-12-31T23:30:00.50-00:30""#,
                "2025-01-01T00:00:00.5Z",
            ),
        ] {
            assert_eq!(
                n(&Normalise::Rfc3339Utc, text),
                Ok(Value::from(utc)),
                "{text}"
            );
        }
        for past in [
            r#""9999-12-31T23:30:00-01:00""#,
            r#""10000-01-01T00:00:00Z""#,
            r#""0001-01-01T00:59:59+01:00""#,
            r#""2100-02-29T00:00:00Z""#,
            r#""2026-04-31T00:00:00Z""#,
            r#""2026-00-10T00:00:00Z""#,
            r#""2026-01-00T00:00:00Z""#,
        ] {
            assert!(n(&Normalise::Rfc3339Utc, past).is_err(), "{past}");
        }
        assert_eq!(
            n(&Normalise::Rfc3339FromEpochSeconds, "253402300799"),
            Ok(Value::from("9999-12-31T23:59:59Z"))
        );
        assert_eq!(
            n(&Normalise::Rfc3339FromEpochSeconds, "-62135596800"),
            Ok(Value::from("0001-01-01T00:00:00Z"))
        );
        assert!(n(&Normalise::Rfc3339FromEpochSeconds, "-62135596801").is_err());
        assert!(n(&Normalise::Rfc3339FromEpochSeconds, &i64::MAX.to_string()).is_err());
        assert!(n(&Normalise::Lowercase, r#""SUC\u001bCESS""#).is_err());
        assert!(n(&Normalise::Lowercase, r#""SUC\u0000CESS""#).is_err());
        assert_eq!(
            n(&Normalise::Rfc3339Utc, r#""2026-12-03T09:00:00.5-00:30""#),
            Ok(Value::from("2026-12-03T09:30:00.5Z"))
        );
        assert_eq!(
            n(&Normalise::Rfc3339FromEpochSeconds, "1764748800"),
            Ok(Value::from("2025-12-03T08:00:00Z"))
        );
        let table: Map<String, Value> =
            serde_json::from_str(r#"{"SUCCESS":"succeeded","FAILURE":"failed"}"#).unwrap();
        assert_eq!(
            n(&Normalise::Table(table.clone()), r#""FAILURE""#),
            Ok(Value::from("failed"))
        );
        assert!(n(&Normalise::Table(table), r#""success""#).is_err());
    }
}
