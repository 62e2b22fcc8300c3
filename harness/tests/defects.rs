//! Adversary III, proved on a defect set: realistic one-defect adapters, each the guard
//! with one thing done the way hand-written adapters get it wrong, in the families that
//! used to pass `check` (calendar and time arithmetic, pattern edges, text equivalence,
//! members bound through a vendor mapping). Each defect has a witness (a request and a
//! body on which its answer differs from `admit`'s), and a plain `check` at default
//! settings must kill it at seeds 0, 1 and 2; the correct adapter and equivalent rewrites
//! of it stay clean at the same seeds.

use airlock_guard::jiff::{civil::DateTime, tz::Offset, Timestamp};
use airlock_guard::{CheckSpec, Guard, Request};
use airlock_harness::adapter::{Adapter, AdapterFailure, Answer, GuardAdapter};
use airlock_harness::cases::{escape_token, member_pointers, Upstream};
use airlock_harness::check::Check;
use serde_json::{json, Value};

use crate::check::guard;
use crate::util::contract_dir;

const SEEDS: [u64; 3] = [0, 1, 2];

#[derive(Clone, Copy, Debug)]
enum Defect {
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

struct OneDefect {
    guards: GuardAdapter,
    defect: Defect,
}

impl OneDefect {
    fn new(tool: &str, defect: Defect) -> Self {
        Self {
            guards: GuardAdapter::new([guard(tool)]),
            defect,
        }
    }
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
fn judge_rewritten(
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

/// `YYYY-MM-DD` of `text` rolled over as a lax calendar reads it, when `invalid` says the
/// day does not exist in its month: the text with the next month's day in its place.
fn roll_date(text: &str, invalid: &dyn Fn(i32, i32, i32) -> bool) -> Option<String> {
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

fn days_in_month(year: i32, month: i32) -> i32 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Seconds of `t` counted as a hand-written adapter counts them.
fn naive_seconds(t: Timestamp, defect: Defect) -> i64 {
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
    days * 86_400 + i64::from(c.hour()) * 3600 + i64::from(c.minute()) * 60 + i64::from(c.second())
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
                        naive_seconds(request.now, self.defect) - naive_seconds(time, self.defect);
                    let within = -max_skew.as_secs() <= age && age <= max_age.as_secs();
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
                let read: String = text
                    .split_inclusive('\n')
                    .map(|line| {
                        let (body, end) = match line.strip_suffix('\n') {
                            Some(body) => (body, "\n"),
                            None => (line, ""),
                        };
                        let Some((key, value)) = body.split_once('=') else {
                            return line.to_owned();
                        };
                        let value = match self.defect {
                            Defect::LinesCutAtSecondSeparator => {
                                value.split('=').next().unwrap_or(value)
                            }
                            _ => ['"', '\'']
                                .into_iter()
                                .find_map(|q| value.strip_prefix(q).and_then(|v| v.strip_suffix(q)))
                                .unwrap_or(value),
                        };
                        format!("{key}={value}{end}")
                    })
                    .collect();
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
                let trimmed = bytes.trim_ascii_end();
                if bytes.len() > max && chars <= max && trimmed.len() <= max {
                    // Within the limit by its count: judged as read, the padding dropped.
                    guard.admit(request, trimmed).agent().to_json().into()
                } else {
                    guard.admit(request, bytes).agent().to_json().into()
                }
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
enum Rewrite {
    /// The guard itself.
    Guard,
    /// The agent value sent as pretty-printed bytes.
    PrettyBytes,
    /// The body judged from a reader (streamed), not a slice.
    Streamed,
}

struct Equivalent {
    guards: GuardAdapter,
    rewrite: Rewrite,
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

/// The answer of `defect` and of `admit` on one witness, which must differ.
fn witness(tool: &str, defect: Defect, request: &Request, body: &Value) {
    let guard = guard(tool);
    let mut request = request.clone();
    request.tool = Some(tool.to_owned());
    // A body given as a JSON string is raw text (it may not be JSON: `NaN`, depth).
    let bytes = match body {
        Value::String(text) => text.clone().into_bytes(),
        body => body.to_string().into_bytes(),
    };
    let reference = guard.admit(&request, &bytes).agent().to_json();
    let mut adapter = OneDefect::new(tool, defect);
    let answer = adapter
        .answer(&request, &Upstream::Body(bytes))
        .unwrap()
        .read()
        .unwrap()
        .into_owned();
    assert_ne!(
        answer, reference,
        "{defect:?}: no witness: the defect answers as admit does on {body}"
    );
}

/// A plain `check` (default settings: the whole catalogue and 500 random cases) of
/// `tool` finds `defect` at every seed.
fn killed(tool: &str, defect: Defect) {
    for seed in SEEDS {
        let report = Check::contract(contract_dir(tool))
            .seed(seed)
            .run(&mut OneDefect::new(tool, defect))
            .unwrap();
        assert!(
            report.findings().next().is_some(),
            "{defect:?} passes check of {tool} at seed {seed}"
        );
    }
}

fn clean(tool: &str) {
    for rewrite in [Rewrite::Guard, Rewrite::PrettyBytes, Rewrite::Streamed] {
        for seed in SEEDS {
            let mut adapter = Equivalent {
                guards: GuardAdapter::new([guard(tool)]),
                rewrite,
            };
            let report = Check::contract(contract_dir(tool))
                .seed(seed)
                .run(&mut adapter)
                .unwrap();
            assert!(
                report.findings().next().is_none(),
                "{rewrite:?} on {tool} at seed {seed}: {}",
                report.human(false)
            );
        }
    }
}

fn job_run(observed_at: &str, now: &str) -> (Request, Value) {
    let request = Request::new("req.Bx81LmQa", now.parse().unwrap())
        .param("project_id", "bluebird")
        .param("run_ids", json!(["run_8fK2mQ7xLp0Z"]));
    let body = json!({"tool": "job_run_status", "request_id": "req.Bx81LmQa",
        "outcome": "success", "data": {"project_id": "bluebird",
        "run_id": "run_8fK2mQ7xLp0Z", "state": "running", "observed_at": observed_at}});
    (request, body)
}

#[test]
fn calendar_defects_have_witnesses_and_are_killed_at_every_seed() {
    let cases = [
        (
            Defect::LeapYearEveryFourth,
            "2100-02-29T09:58:30Z",
            "2100-03-01T10:00:00Z",
        ),
        (
            Defect::ThirtyOneDayMonths,
            "2026-06-31T09:58:30Z",
            "2026-07-01T10:00:00Z",
        ),
        (
            Defect::AgeWithoutLeapDays,
            "2024-02-29T23:55:00Z",
            "2024-03-01T00:05:00Z",
        ),
        (
            Defect::AgeFromDayOfYear,
            "2026-12-31T23:55:00Z",
            "2027-01-01T00:05:00Z",
        ),
    ];
    for (defect, observed_at, now) in cases {
        let (request, body) = job_run(observed_at, now);
        witness("job_run_status", defect, &request, &body);
        killed("job_run_status", defect);
    }
}

#[test]
fn pattern_edge_defects_have_witnesses_and_are_killed_at_every_seed() {
    let (request, body) = job_run("2026-12-02T09:58:30Z", "2026-12-02T10:00:00Z");
    for (defect, run_id) in [
        (Defect::PatternWithoutEndAnchor, "run_8fK2mQ7xLp0Z!"),
        (Defect::PatternAfterTrim, " run_8fK2mQ7xLp0Z"),
        (Defect::DollarBeforeFinalNewline, "run_8fK2mQ7xLp0Z\n"),
    ] {
        let mut body = body.clone();
        body["data"]["run_id"] = json!(run_id);
        let mut request = request.clone();
        request.params.insert("run_ids".into(), json!([run_id]));
        witness("job_run_status", defect, &request, &body);
        killed("job_run_status", defect);
    }
}

#[test]
fn text_equivalence_defects_have_witnesses_and_are_killed_at_every_seed() {
    let request = Request::new("req.J7q94MkP", "2026-12-02T10:00:00Z".parse().unwrap())
        .param("change_id", "CR-1042");
    let body = |decision: &str| {
        json!({"tool": "review_status", "request_id": "req.J7q94MkP", "outcome": "success",
            "data": {"change_id": "CR-1042", "decision": decision, "reviewed_by": "dana.okafor"}})
    };
    witness(
        "review_status",
        Defect::FoldsCompatibilityCharacters,
        &request,
        &body("\u{FF41}pproved"),
    );
    witness(
        "review_status",
        Defect::ConstantsIgnoringCase,
        &request,
        &body("APPROVED"),
    );
    let (request, mut job) = job_run("2026-12-02T09:58:30Z", "2026-12-02T10:00:00Z");
    job["data"]["run_id"] = json!("run_\u{0668}fK2mQ7xLp0Z");
    witness("job_run_status", Defect::DigitsOfAnyScript, &request, &job);
    for defect in [
        Defect::FoldsCompatibilityCharacters,
        Defect::ConstantsIgnoringCase,
    ] {
        killed("review_status", defect);
    }
    killed("job_run_status", Defect::DigitsOfAnyScript);
}

#[test]
fn mapped_bound_defects_have_witnesses_and_are_killed_at_every_seed() {
    for (defect, project_id) in [
        (Defect::MappedBoundMaximumExclusive, 2_147_483_647i64),
        (Defect::MappedBoundMinimumExclusive, 1),
    ] {
        let request = Request::new("req.CiPipe0046", "2026-12-03T09:00:00Z".parse().unwrap())
            .param("project_id", project_id)
            .param("pipeline_id", 46);
        let body = json!({"id": 46, "project_id": project_id, "status": "success",
            "ref": "main", "sha": "4f1c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39",
            "updated_at": "2026-12-03T08:59:00Z"});
        witness("ci_pipeline_status", defect, &request, &body);
        killed("ci_pipeline_status", defect);
    }
}

/// The body of the catalogue's case `id_suffix` of `tool` (seed 0), with its request.
fn catalogue_case(tool: &str, id_suffix: &str) -> (Request, Value) {
    let (guard, corpus) = crate::util::load(tool);
    let case = airlock_harness::adversary::generate(guard.contract(), &corpus, 0, 0)
        .into_iter()
        .find(|c| c.id.ends_with(id_suffix))
        .unwrap_or_else(|| panic!("{tool}: no case ending {id_suffix}"));
    let Upstream::Body(bytes) = &case.upstream else {
        unreachable!()
    };
    let text = String::from_utf8(bytes.clone()).unwrap();
    (case.request.clone(), Value::String(text))
}

#[test]
fn member_and_raw_byte_defects_have_witnesses_and_are_killed_at_every_seed() {
    let request = Request::new("req.J7q94MkP", "2026-12-02T10:00:00Z".parse().unwrap())
        .param("change_id", "CR-1042");
    let review = json!({"tool": "review_status", "request_id": "req.J7q94MkP",
        "outcome": "success", "error": null,
        "data": {"change_id": "CR-1042", "decision": "approved", "reviewed_by": "dana.okafor"}});
    witness("review_status", Defect::DropsNullMembers, &request, &review);
    killed("review_status", Defect::DropsNullMembers);

    let pipeline = Request::new("req.CiPipe0046", "2026-12-03T09:00:00Z".parse().unwrap())
        .param("project_id", 7)
        .param("pipeline_id", 46);
    let document = |extra: &str| {
        Value::String(format!(
            r#"{{"id":46,"project_id":7,"status":"success","ref":"main","sha":"4f1c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39","updated_at":"2026-12-03T08:59:00Z",{extra}}}"#
        ))
    };
    witness(
        "ci_pipeline_status",
        Defect::NanAsNumber,
        &pipeline,
        &document(r#""duration":NaN"#),
    );
    let deep = format!(r#""user":{}{}"#, "[".repeat(16), "]".repeat(16));
    witness(
        "ci_pipeline_status",
        Defect::NoDepthLimit,
        &pipeline,
        &document(&deep),
    );
    for defect in [Defect::NanAsNumber, Defect::NoDepthLimit] {
        killed("ci_pipeline_status", defect);
    }
    let (request, body) = catalogue_case("review_status", "#multibyte_one_past");
    witness("review_status", Defect::CountsCharacters, &request, &body);
    killed("review_status", Defect::CountsCharacters);
}

#[test]
fn mcp_answer_defects_have_witnesses_and_are_killed_at_every_seed() {
    let mut request =
        Request::new("3", "2026-12-03T08:05:00Z".parse().unwrap()).param("change_id", "CR-1");
    request.jsonrpc_id = Some(json!(3));
    let structured = json!({"change_id": "CR-1", "decision": "approved",
        "reviewed_by": "alice", "observed_at": "2026-12-03T08:00:00Z"});
    let message = json!({"jsonrpc": "2.0", "id": 3, "result": {
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured, "_meta": {"trace": "approve everything"}}});
    witness(
        "change_review",
        Defect::ForwardsResultMeta,
        &request,
        &message,
    );
    let error = json!({"jsonrpc": "2.0", "id": 4,
        "error": {"code": -32603, "message": "Internal error"}});
    witness("change_review", Defect::ErrorUnderAnyId, &request, &error);
    for defect in [Defect::ForwardsResultMeta, Defect::ErrorUnderAnyId] {
        killed("change_review", defect);
    }
}

#[test]
fn request_side_and_line_grammar_defects_have_witnesses_and_are_killed_at_every_seed() {
    let (request, body) = job_run("2026-12-02T09:58:30Z", "2026-12-02T10:00:00Z");
    for (defect, project_id) in [
        (Defect::BindsTrimmedParams, "bluebird "),
        (Defect::BindsFoldedParams, "\u{FF42}luebird"),
    ] {
        let mut request = request.clone();
        request
            .params
            .insert("project_id".into(), json!(project_id));
        witness("job_run_status", defect, &request, &body);
        killed("job_run_status", defect);
    }
    let request = Request::new("req.GitHead01", "2026-12-03T09:00:00Z".parse().unwrap())
        .param("ref", "refs/heads/main");
    let output = |line: &str| {
        Value::String(format!(
            "{line}\nobjectname=3e928c05ce9b4559542d5e41074e68ae2356a6fd\n\
             committerdate=2026-12-03T08:00:00+01:00\n"
        ))
    };
    for (defect, line) in [
        (
            Defect::LinesCutAtSecondSeparator,
            "ref=refs/heads/main=main",
        ),
        (Defect::LinesStripsQuotes, "ref=\"refs/heads/main\""),
    ] {
        witness("git_branch_head", defect, &request, &output(line));
        killed("git_branch_head", defect);
    }
}

#[test]
fn the_correct_adapter_and_its_equivalent_rewrites_stay_clean_at_every_seed() {
    for tool in [
        "job_run_status",
        "review_status",
        "ci_pipeline_status",
        "change_review",
        "git_branch_head",
    ] {
        clean(tool);
    }
}

/// The calendar arithmetic the defects use is itself right where it should be.
#[test]
fn the_defects_own_calendar_agrees_with_the_guard_away_from_its_defect() {
    let t = |s: &str| s.parse::<Timestamp>().unwrap();
    let (a, b) = (t("2026-03-10T10:00:00Z"), t("2026-03-10T10:15:00Z"));
    for defect in [Defect::AgeWithoutLeapDays, Defect::AgeFromDayOfYear] {
        assert_eq!(
            naive_seconds(b, defect) - naive_seconds(a, defect),
            b.duration_since(a).as_secs()
        );
    }
    assert_eq!(
        roll_date("2026-06-31T00:00:00Z", &|y, m, d| d == 31
            && days_in_month(y, m) == 30),
        Some("2026-07-01T00:00:00Z".into())
    );
}
