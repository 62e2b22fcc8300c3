//! The one-defect adapters of the defect set, and the correct adapter's equivalent
//! rewrites: each the guard with one thing done the way a hand-written adapter does it.

use airlock_guard::jiff::{civil::DateTime, tz::Offset, Timestamp};
use airlock_guard::{CheckSpec, Contract, Guard, Request};
use airlock_harness::adapter::{Adapter, AdapterFailure, Answer, GuardAdapter};
use airlock_harness::cases::{escape_token, member_pointers, Upstream};
use serde_json::{json, Value};

use crate::check::guard;
use crate::util::contract_dir;
#[derive(Clone, Copy, Debug)]
pub(super) enum Defect {
    // Calendar and time arithmetic.
    /// Leap years by `year % 4` alone: Feb 29 of 2100 read as March 1.
    LeapYearEveryFourth,
    /// Every month has 31 days: June 31 read as July 1.
    ThirtyOneDayMonths,
    /// Ages from a day count without leap days (Feb 29 counted as March 1).
    AgeWithoutLeapDays,
    /// Ages from the day of the year, the year dropped.
    AgeFromDayOfYear,
    // Pattern edges.
    /// The pattern tested without its end anchor: a valid prefix passes.
    PatternWithoutEndAnchor,
    /// The pattern tested on the trimmed value; the value passed on untrimmed.
    PatternAfterTrim,
    /// Python's `$`: a final newline before the end matches.
    DollarBeforeFinalNewline,
    // Text equivalence.
    /// Strings NFKC-folded before judging (full-width forms, the Kelvin sign, ligatures).
    FoldsCompatibilityCharacters,
    /// Decimal digits of any script read as ASCII digits before judging.
    DigitsOfAnyScript,
    /// `enum` and `const` compared ignoring ASCII case.
    ConstantsIgnoringCase,
    // Members bound through a vendor mapping.
    /// `project_id` past the vendor's maximum refused one early (the bound exclusive).
    MappedBoundMaximumExclusive,
    /// `project_id` at the vendor's minimum refused (the bound exclusive).
    MappedBoundMinimumExclusive,
    // Members and values.
    /// Members whose value is `null` dropped before judging (as if absent).
    DropsNullMembers,
    /// `NaN`, `Infinity` and `-Infinity` read as numbers (here 0), wherever they stand.
    NanAsNumber,
    // Raw bytes where the parser decides.
    /// No depth limit: what nests past `max_depth` is read (and cut to `[]`).
    NoDepthLimit,
    /// `max_bytes` counted in characters, not bytes.
    CountsCharacters,
    // MCP answers.
    /// The result's `_meta` handed to the agent beside the guard's value.
    ForwardsResultMeta,
    /// A JSON-RPC error taken as the call's answer whatever its id.
    ErrorUnderAnyId,
    // The request's side.
    /// Request parameters trimmed before they are compared.
    BindsTrimmedParams,
    /// Request parameters NFKC-folded before they are compared.
    BindsFoldedParams,
    // Command output (line grammar).
    /// A line split on every separator, its second field taken (`a=b=c` reads `b`).
    LinesCutAtSecondSeparator,
    /// Quotes around a line's value stripped.
    LinesStripsQuotes,
}

pub(super) struct OneDefect {
    guards: GuardAdapter,
    defect: Defect,
    /// For [`Defect::CountsCharacters`]: the same contract with room for `max_bytes`
    /// characters of four bytes each, so the reader's character count alone decides.
    by_characters: Option<Guard>,
}

impl OneDefect {
    pub(super) fn new(tool: &str, defect: Defect) -> Self {
        let by_characters = matches!(defect, Defect::CountsCharacters).then(|| widened(tool));
        Self {
            guards: GuardAdapter::new([guard(tool)]),
            defect,
            by_characters,
        }
    }
}

/// `tool`'s contract with its `max_bytes` four times as large, loaded from a copy.
fn widened(tool: &str) -> Guard {
    let from = contract_dir(tool);
    let copy = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, copy.path().join(path.file_name().unwrap())).unwrap();
    }
    let max = guard(tool).contract().limits().max_bytes;
    let toml = copy.path().join("contract.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let line = format!("max_bytes = {max}");
    assert!(text.contains(&line), "{tool}: {line} not in contract.toml");
    std::fs::write(
        &toml,
        text.replace(&line, &format!("max_bytes = {}", max * 4)),
    )
    .unwrap();
    Guard::new(Contract::load(copy.path()).unwrap())
}

/// The fixed failure every rejection gives the agent.
fn failure(guard: &Guard, request: &Request) -> Answer {
    guard.admit(request, b"").agent().to_json().into()
}

/// The body's string members `(location, text)`, in document order.
fn strings(value: &Value) -> Vec<(String, String)> {
    member_pointers(value)
        .into_iter()
        .filter_map(|(parent, name)| {
            let at = format!("{parent}/{}", escape_token(&name));
            let text = value.pointer(&at)?.as_str()?.to_owned();
            Some((at, text))
        })
        .collect()
}

/// The keyword `name` of the subschemas judging `location`, as strings.
fn keyword(guard: &Guard, location: &str, name: &str) -> Vec<Value> {
    airlock_harness::adversary::schemas_at(guard.contract(), location)
        .iter()
        .filter_map(|s| s.get(name).cloned())
        .collect()
}

/// Judges `value` rewritten by `rewrite` (per string member: `Some(new)` to judge `new`
/// in its place). The agent gets the guard's answer on the rewritten body, with the
/// original text put back where `keep_original` (the adapter forwards what it read).
pub(crate) fn judge_rewritten(
    guard: &Guard,
    request: &Request,
    bytes: &[u8],
    keep_original: bool,
    rewrite: &dyn Fn(&str, &str) -> Option<String>,
) -> Answer {
    let limits = guard.contract().limits();
    let parsed = (bytes.len() as u64 <= limits.max_bytes)
        .then(|| airlock_guard::parse(bytes, limits.max_depth).ok())
        .flatten();
    let Some(mut value) = parsed else {
        return guard.admit(request, bytes).agent().to_json().into();
    };
    let mut originals = Vec::new();
    for (at, text) in strings(&value) {
        if let Some(new) = rewrite(&at, &text).filter(|new| *new != text) {
            if let Some(slot) = value.pointer_mut(&at) {
                *slot = Value::String(new);
                originals.push((at, text));
            }
        }
    }
    if originals.is_empty() {
        return guard.admit(request, bytes).agent().to_json().into();
    }
    // The adapter binds the value it judged: a parameter equal to the text it read is
    // compared with what it made of it.
    let mut request = request.clone();
    for (at, text) in &originals {
        let judged = value.pointer(at).cloned().unwrap_or_default();
        for param in request.params.values_mut() {
            match param {
                Value::String(p) if p == text => *param = judged.clone(),
                Value::Array(items) => {
                    for item in items.iter_mut().filter(|i| i.as_str() == Some(text)) {
                        *item = judged.clone();
                    }
                }
                _ => {}
            }
        }
    }
    let admission = guard.admit(&request, value.to_string().as_bytes());
    let mut agent = admission.agent().to_json();
    if keep_original && admission.is_admitted() {
        for (at, text) in originals {
            if let Some(slot) = agent.pointer_mut(&at) {
                *slot = Value::String(text);
            }
        }
    }
    agent.into()
}

/// A command's output with each line's value (after `separator`) read by `read`
/// (`None`: as it is); the lines and their endings kept.
pub(crate) fn read_line_values(
    text: &str,
    separator: &str,
    read: &dyn Fn(&str) -> Option<String>,
) -> String {
    text.split_inclusive('\n')
        .map(|line| {
            let (body, end) = match line.strip_suffix('\n') {
                Some(body) => (body, "\n"),
                None => (line, ""),
            };
            match body
                .split_once(separator)
                .and_then(|(key, value)| Some((key, read(value)?)))
            {
                Some((key, value)) => format!("{key}{separator}{value}{end}"),
                None => line.to_owned(),
            }
        })
        .collect()
}

/// `YYYY-MM-DD` of `text` rolled over as a lax calendar reads it, when `invalid` says the
/// day does not exist in its month: the text with the next month's day in its place.
pub(super) fn roll_date(text: &str, invalid: &dyn Fn(i32, i32, i32) -> bool) -> Option<String> {
    let year: i32 = text.get(..4)?.parse().ok()?;
    let month: i32 = text.get(5..7)?.parse().ok()?;
    let day: i32 = text.get(8..10)?.parse().ok()?;
    if !(text.len() >= 20 && text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-') {
        return None;
    }
    if !invalid(year, month, day) {
        return None;
    }
    let (y, m) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    let overflow = day - days_in_month(year, month);
    Some(format!("{y:04}-{m:02}-{overflow:02}{}", &text[10..]))
}

pub(super) fn days_in_month(year: i32, month: i32) -> i32 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Nanoseconds of `t` counted as a hand-written adapter counts them: its day count is
/// wrong, the rest (time of day, fraction) right, so only the calendar differs.
pub(super) fn naive_nanos(t: Timestamp, defect: Defect) -> i128 {
    const BEFORE: [i64; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let c: DateTime = Offset::UTC.to_datetime(t);
    let (y, m, d) = (
        i64::from(c.year()),
        i64::from(c.month()),
        i64::from(c.day()),
    );
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match defect {
        // No leap days: Feb 29 lands on March 1's count.
        Defect::AgeWithoutLeapDays => y * 365 + BEFORE[(m - 1) as usize] + d - 1,
        // The day of the year, right about leap years, the year itself dropped.
        _ => BEFORE[(m - 1) as usize] + i64::from(leap && m > 2) + d - 1,
    };
    let seconds = days * 86_400
        + i64::from(c.hour()) * 3600
        + i64::from(c.minute()) * 60
        + i64::from(c.second());
    i128::from(seconds) * 1_000_000_000 + i128::from(c.subsec_nanosecond())
}

impl Adapter for OneDefect {
    fn answer(&mut self, request: &Request, upstream: &Upstream) -> Result<Answer, AdapterFailure> {
        let Upstream::Body(bytes) = upstream else {
            return self.guards.answer(request, upstream);
        };
        let guard = self.guards.route(request).expect("one contract");
        let is_time = |at: &str| {
            keyword(guard, at, "format")
                .iter()
                .any(|f| f == "date-time")
        };
        Ok(match self.defect {
            Defect::LeapYearEveryFourth => {
                judge_rewritten(guard, request, bytes, false, &|at, s| {
                    is_time(at)
                        .then(|| {
                            roll_date(s, &|y, m, d| {
                                m == 2 && d == 29 && y % 4 == 0 && days_in_month(y, 2) == 28
                            })
                        })
                        .flatten()
                })
            }
            Defect::ThirtyOneDayMonths => {
                judge_rewritten(guard, request, bytes, false, &|at, s| {
                    is_time(at)
                        .then(|| roll_date(s, &|y, m, d| d == 31 && days_in_month(y, m) == 30))
                        .flatten()
                })
            }
            Defect::AgeWithoutLeapDays | Defect::AgeFromDayOfYear => {
                let Ok(value) = airlock_guard::parse(bytes, 64) else {
                    return self.guards.answer(request, upstream);
                };
                let mut bent = request.clone();
                for check in guard.contract().checks() {
                    let CheckSpec::Fresh {
                        field,
                        max_age,
                        max_skew,
                    } = check
                    else {
                        continue;
                    };
                    let Some(time) = field
                        .resolve(&value)
                        .and_then(Value::as_str)
                        .and_then(|t| t.parse::<Timestamp>().ok())
                    else {
                        continue;
                    };
                    // Its own freshness check, on its own day count, in place of the
                    // guard's (which is given an age of zero).
                    let age =
                        naive_nanos(request.now, self.defect) - naive_nanos(time, self.defect);
                    let within = -max_skew.as_nanos() <= age && age <= max_age.as_nanos();
                    if !within {
                        return Ok(failure(guard, request));
                    }
                    bent.now = time;
                }
                guard.admit(&bent, bytes).agent().to_json().into()
            }
            Defect::PatternWithoutEndAnchor => {
                judge_rewritten(guard, request, bytes, true, &|at, s| {
                    let pattern = keyword(guard, at, "pattern");
                    let pattern = pattern.first()?.as_str()?;
                    let unanchored = regex::Regex::new(pattern.strip_suffix('$')?).ok()?;
                    let full = regex::Regex::new(pattern).ok()?;
                    if full.is_match(s) {
                        return None;
                    }
                    unanchored.find(s).map(|m| s[..m.end()].to_owned())
                })
            }
            Defect::PatternAfterTrim => judge_rewritten(guard, request, bytes, true, &|at, s| {
                (!keyword(guard, at, "pattern").is_empty()).then(|| s.trim().to_owned())
            }),
            Defect::DollarBeforeFinalNewline => {
                judge_rewritten(guard, request, bytes, true, &|at, s| {
                    (!keyword(guard, at, "pattern").is_empty())
                        .then(|| s.strip_suffix('\n').map(str::to_owned))
                        .flatten()
                })
            }
            Defect::BindsTrimmedParams | Defect::BindsFoldedParams => {
                let bend = |p: &str| match self.defect {
                    Defect::BindsTrimmedParams => p.trim().to_owned(),
                    _ => folded(p),
                };
                let mut bent = request.clone();
                for param in bent.params.values_mut() {
                    match param {
                        Value::String(p) => *p = bend(p),
                        Value::Array(items) => {
                            for item in items.iter_mut() {
                                if let Value::String(p) = item {
                                    *p = bend(p);
                                }
                            }
                        }
                        _ => {}
                    }
                }
                guard.admit(&bent, bytes).agent().to_json().into()
            }
            Defect::LinesCutAtSecondSeparator | Defect::LinesStripsQuotes => {
                let Ok(text) = std::str::from_utf8(bytes) else {
                    return self.guards.answer(request, upstream);
                };
                let defect = self.defect;
                let read = read_line_values(text, "=", &|value| {
                    let read = match defect {
                        Defect::LinesCutAtSecondSeparator => {
                            value.split('=').next().unwrap_or(value)
                        }
                        _ => ['"', '\'']
                            .into_iter()
                            .find_map(|q| value.strip_prefix(q).and_then(|v| v.strip_suffix(q)))
                            .unwrap_or(value),
                    };
                    (read != value).then(|| read.to_owned())
                });
                guard
                    .admit(request, read.as_bytes())
                    .agent()
                    .to_json()
                    .into()
            }
            Defect::FoldsCompatibilityCharacters => {
                judge_rewritten(guard, request, bytes, false, &|_, s| Some(folded(s)))
            }
            Defect::DigitsOfAnyScript => judge_rewritten(guard, request, bytes, false, &|_, s| {
                Some(
                    s.chars()
                        .map(|c| {
                            // The zero of each script's run of ten decimal digits.
                            let zero = [0x0660, 0x06F0, 0x0966, 0x09E6, 0xFF10]
                                .into_iter()
                                .find(|z| (*z..z + 10).contains(&(c as u32)));
                            zero.map_or(c, |z| char::from(b'0' + (c as u32 - z) as u8))
                        })
                        .collect(),
                )
            }),
            Defect::ConstantsIgnoringCase => {
                judge_rewritten(guard, request, bytes, false, &|at, s| {
                    let mut allowed: Vec<Value> = keyword(guard, at, "const");
                    for e in keyword(guard, at, "enum") {
                        allowed.extend(e.as_array().cloned().unwrap_or_default());
                    }
                    allowed
                        .iter()
                        .filter_map(Value::as_str)
                        .find(|a| a.eq_ignore_ascii_case(s))
                        .map(str::to_owned)
                })
            }
            Defect::DropsNullMembers => {
                let Ok(mut value) =
                    airlock_guard::parse(bytes, guard.contract().limits().max_depth)
                else {
                    return self.guards.answer(request, upstream);
                };
                if !drop_nulls(&mut value) {
                    return self.guards.answer(request, upstream);
                }
                guard
                    .admit(request, value.to_string().as_bytes())
                    .agent()
                    .to_json()
                    .into()
            }
            Defect::NanAsNumber => guard
                .admit(request, &non_finite_as_zero(bytes))
                .agent()
                .to_json()
                .into(),
            Defect::NoDepthLimit => {
                let limit = guard.contract().limits().max_depth;
                if airlock_guard::parse(bytes, limit).is_ok() {
                    return self.guards.answer(request, upstream);
                }
                let Ok(mut value) = airlock_guard::parse(bytes, 100_000) else {
                    return self.guards.answer(request, upstream);
                };
                cut_below(&mut value, limit.saturating_sub(2));
                guard
                    .admit(request, value.to_string().as_bytes())
                    .agent()
                    .to_json()
                    .into()
            }
            Defect::CountsCharacters => {
                let max =
                    usize::try_from(guard.contract().limits().max_bytes).unwrap_or(usize::MAX);
                let chars = std::str::from_utf8(bytes).map_or(usize::MAX, |t| t.chars().count());
                let judge = match &self.by_characters {
                    // Within the limit by its count: read whole and judged.
                    Some(wide) if chars <= max => wide,
                    _ => guard,
                };
                judge.admit(request, bytes).agent().to_json().into()
            }
            Defect::ForwardsResultMeta => {
                let admission = guard.admit(request, bytes);
                let mut agent = admission.agent().to_json();
                let meta = serde_json::from_slice::<Value>(bytes)
                    .ok()
                    .and_then(|m| m.pointer("/result/_meta").cloned());
                if let (true, Some(meta)) = (admission.is_admitted(), meta) {
                    agent["_meta"] = meta;
                }
                agent.into()
            }
            Defect::ErrorUnderAnyId => {
                let Ok(mut value) = airlock_guard::parse(bytes, 64) else {
                    return self.guards.answer(request, upstream);
                };
                if value.get("error").is_some() {
                    if let Some(id) = &request.jsonrpc_id {
                        value["id"] = id.clone();
                    }
                    return Ok(guard
                        .admit(request, value.to_string().as_bytes())
                        .agent()
                        .to_json()
                        .into());
                }
                guard.admit(request, bytes).agent().to_json().into()
            }
            Defect::MappedBoundMaximumExclusive | Defect::MappedBoundMinimumExclusive => {
                let edge = match self.defect {
                    Defect::MappedBoundMaximumExclusive => 2_147_483_647,
                    _ => 1,
                };
                let value = airlock_guard::parse(bytes, 64).ok();
                if value.and_then(|v| v.pointer("/project_id").and_then(Value::as_i64))
                    == Some(edge)
                {
                    failure(guard, request)
                } else {
                    guard.admit(request, bytes).agent().to_json().into()
                }
            }
        })
    }
}

/// What NFKC makes of the look-alikes the adversary writes: full-width forms as ASCII,
/// the Kelvin sign as `K`, the `fi` ligature as `fi`.
fn folded(s: &str) -> String {
    s.chars()
        .flat_map(|c| match c as u32 {
            0xFF01..=0xFF5E => vec![char::from_u32(c as u32 - 0xFF01 + 0x21).unwrap_or(c)],
            0x212A => vec!['K'],
            0xFB01 => vec!['f', 'i'],
            _ => vec![c],
        })
        .collect()
}

/// Removes every member whose value is `null`, at any depth; whether any was.
fn drop_nulls(value: &mut Value) -> bool {
    match value {
        Value::Object(map) => {
            let before = map.len();
            map.retain(|_, v| !v.is_null());
            let mut dropped = map.len() != before;
            for v in map.values_mut() {
                dropped |= drop_nulls(v);
            }
            dropped
        }
        Value::Array(items) => items.iter_mut().fold(false, |d, v| drop_nulls(v) | d),
        _ => false,
    }
}

/// Every container nested `depth` levels below the children of `value` replaced by an
/// empty array (the body then nests `depth + 2` deep at most).
fn cut_below(value: &mut Value, depth: usize) {
    let children: Vec<&mut Value> = match value {
        Value::Object(map) => map.values_mut().collect(),
        Value::Array(items) => items.iter_mut().collect(),
        _ => return,
    };
    for child in children {
        if depth == 0 && (child.is_array() || child.is_object()) {
            *child = json!([]);
        } else {
            cut_below(child, depth.saturating_sub(1));
        }
    }
}

/// `bytes` with every `NaN`, `Infinity` and `-Infinity` outside JSON strings read as `0`.
fn non_finite_as_zero(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let (mut i, mut in_string) = (0, false);
    while i < bytes.len() {
        let c = bytes[i];
        let literal = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|t| bytes[i..].starts_with(t.as_bytes()));
        if in_string {
            out.push(c);
            if c == b'\\' && i + 1 < bytes.len() {
                out.push(bytes[i + 1]);
                i += 1;
            } else if c == b'"' {
                in_string = false;
            }
        } else if c == b'"' {
            in_string = true;
            out.push(c);
        } else if let Some(literal) = literal {
            out.push(b'0');
            i += literal.len();
            continue;
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// The correct adapter written differently: the same verdicts and agent values.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Rewrite {
    /// The guard itself.
    Guard,
    /// The agent value sent as pretty-printed bytes.
    PrettyBytes,
    /// The body judged from a reader (streamed), not a slice.
    Streamed,
}

pub(crate) struct Equivalent {
    pub(crate) guards: GuardAdapter,
    pub(crate) rewrite: Rewrite,
}

impl Adapter for Equivalent {
    fn answer(&mut self, request: &Request, upstream: &Upstream) -> Result<Answer, AdapterFailure> {
        let Upstream::Body(bytes) = upstream else {
            return self.guards.answer(request, upstream);
        };
        let guard = self.guards.route(request).expect("one contract");
        Ok(match self.rewrite {
            Rewrite::Guard => return self.guards.answer(request, upstream),
            Rewrite::PrettyBytes => Answer::Bytes(
                serde_json::to_vec_pretty(&guard.admit(request, bytes).agent().to_json()).unwrap(),
            ),
            Rewrite::Streamed => guard
                .admit_reader(request, &bytes[..])
                .agent()
                .to_json()
                .into(),
        })
    }
}
