//! Learning from near misses: a response the user says must be rejected, which the
//! scaffold inferred from the samples still admits, names the rule the samples could not
//! show. Where the near miss differs from its nearest sample, the value lies outside what
//! the samples span along some dimension (a number past their range, a string longer or of
//! another shape, a longer array, a member that never appears together with a sibling's
//! value, a time older or further ahead than any sample's); each such dimension becomes a
//! candidate tightening that every sample still satisfies. Candidates are tried one at a
//! time, and one is kept only when the guard then rejects the near miss and still admits
//! every sample.

use airlock_guard::jiff::{SignedDuration, Timestamp};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

use super::shape::{matches_shape, same_structure, shape};
use crate::cases::escape_token;

/// A step into a value: an object member, or any item of an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Step {
    Member(String),
    Item,
}

/// One way to make the scaffold stricter, consistent with every sample.
#[derive(Debug, Clone)]
pub(super) enum Tightening {
    /// Set `keyword` to `value` in the data schema at `location`.
    Keyword {
        location: Vec<Step>,
        keyword: &'static str,
        value: Value,
    },
    /// In the object at `location`, `member` may not appear while `sibling` is `value`.
    Absent {
        location: Vec<Step>,
        member: String,
        sibling: String,
        value: Value,
    },
    /// In the object at `location`, `member` is required unless `sibling` is `value`.
    Required {
        location: Vec<Step>,
        member: String,
        sibling: String,
        value: Value,
    },
    /// A `fresh` check on `field` (a `/data/...` pointer) with these bounds (tighter than
    /// any earlier one).
    Fresh {
        field: String,
        max_age: Option<SignedDuration>,
        max_skew: Option<SignedDuration>,
    },
}

impl Tightening {
    /// One line for the user: what was learned.
    pub(super) fn describe(&self) -> String {
        match self {
            Tightening::Keyword {
                location,
                keyword,
                value,
            } => format!("{}: {keyword} {value}", pointer(location)),
            Tightening::Absent {
                location,
                member,
                sibling,
                value,
            } => format!(
                "{}: `{member}` absent while `{sibling}` is {value}",
                pointer(location)
            ),
            Tightening::Required {
                location,
                member,
                sibling,
                value,
            } => format!(
                "{}: `{member}` required unless `{sibling}` is {value}",
                pointer(location)
            ),
            Tightening::Fresh {
                field,
                max_age,
                max_skew,
            } => {
                let mut out = format!("{field}: fresh");
                if let Some(age) = max_age {
                    out.push_str(&format!(", max_age {}", duration_text(*age)));
                }
                if let Some(skew) = max_skew {
                    out.push_str(&format!(", max_skew {}", duration_text(*skew)));
                }
                out
            }
        }
    }

    /// Apply to the data schema (a `Fresh` goes to the manifest: see [`FreshBounds`]).
    pub(super) fn apply(&self, schema: &mut Value, fresh: &mut Vec<FreshBounds>) {
        match self {
            Tightening::Keyword {
                location,
                keyword,
                value,
            } => {
                if let Some(Value::Object(at)) = schema_at_mut(schema, location) {
                    if *keyword == "type" || *keyword == "uniqueItems" {
                        at.insert((*keyword).to_owned(), value.clone());
                        return;
                    }
                    // A learned bound replaces the headroom guess; two bounds on the same
                    // side keep the tighter (both are consistent with every sample).
                    at.insert((*keyword).to_owned(), value.clone());
                    let replaced = match *keyword {
                        "exclusiveMaximum" => Some("maximum"),
                        "exclusiveMinimum" => Some("minimum"),
                        "maximum" => Some("exclusiveMaximum"),
                        "minimum" => Some("exclusiveMinimum"),
                        _ => None,
                    };
                    if let Some(other) = replaced {
                        at.remove(other);
                    }
                }
            }
            Tightening::Absent {
                location,
                member,
                sibling,
                value,
            } => {
                let rule = json!({
                    "if": {"properties": {sibling: {"const": value}}, "required": [sibling]},
                    "then": {"not": {"required": [member]}}
                });
                add_rule(schema, location, rule);
            }
            Tightening::Required {
                location,
                member,
                sibling,
                value,
            } => {
                let rule = json!({
                    "if": {"properties": {sibling: {"const": value}}, "required": [sibling]},
                    "else": {"required": [member]}
                });
                add_rule(schema, location, rule);
            }
            Tightening::Fresh {
                field,
                max_age,
                max_skew,
            } => match fresh.iter_mut().find(|f| f.field == *field) {
                Some(bounds) => {
                    bounds.max_age = tighter(bounds.max_age, *max_age);
                    bounds.max_skew = tighter(bounds.max_skew, *max_skew);
                }
                None => fresh.push(FreshBounds {
                    field: field.clone(),
                    max_age: *max_age,
                    max_skew: *max_skew,
                }),
            },
        }
    }
}

/// A learned `fresh` check: a bound left `None` is written as a generous default.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FreshBounds {
    pub(super) field: String,
    pub(super) max_age: Option<SignedDuration>,
    pub(super) max_skew: Option<SignedDuration>,
}

/// Add `rule` to the `allOf` of the object schema at `location`.
fn add_rule(schema: &mut Value, location: &[Step], rule: Value) {
    if let Some(Value::Object(at)) = schema_at_mut(schema, location) {
        match at.get_mut("allOf") {
            Some(Value::Array(rules)) => rules.push(rule),
            _ => {
                at.insert("allOf".into(), json!([rule]));
            }
        }
    }
}

fn tighter(a: Option<SignedDuration>, b: Option<SignedDuration>) -> Option<SignedDuration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `/data/...` with `*` for array items.
fn pointer(location: &[Step]) -> String {
    let mut out = String::from("/data");
    for step in location {
        match step {
            Step::Member(name) => {
                out.push('/');
                out.push_str(&escape_token(name));
            }
            Step::Item => out.push_str("/*"),
        }
    }
    out
}

fn schema_at_mut<'s>(schema: &'s mut Value, location: &[Step]) -> Option<&'s mut Value> {
    let mut at = schema;
    for step in location {
        at = match step {
            Step::Member(name) => at.get_mut("properties")?.get_mut(name)?,
            Step::Item => at.get_mut("items")?,
        };
    }
    Some(at)
}

fn schema_at<'s>(schema: &'s Value, location: &[Step]) -> Option<&'s Value> {
    let mut at = schema;
    for step in location {
        at = match step {
            Step::Member(name) => at.get("properties")?.get(name)?,
            Step::Item => at.get("items")?,
        };
    }
    Some(at)
}

/// Every value the samples hold at `location` (array items all count).
fn values_at<'v>(samples: &'v [Value], location: &[Step]) -> Vec<&'v Value> {
    let mut current: Vec<&Value> = samples.iter().collect();
    for step in location {
        current = current
            .into_iter()
            .flat_map(|v| -> Vec<&Value> {
                match (step, v) {
                    (Step::Member(name), Value::Object(map)) => map.get(name).into_iter().collect(),
                    (Step::Item, Value::Array(items)) => items.iter().collect(),
                    _ => Vec::new(),
                }
            })
            .collect();
    }
    current
}

/// Where the near miss differs from a sample: the location, the concrete `/data` pointer,
/// the sample's value and the near miss's (either may be absent).
struct Difference<'v> {
    location: Vec<Step>,
    pointer: String,
    parent: Option<&'v Map<String, Value>>,
    ours: Option<&'v Value>,
}

fn differences<'v>(
    sample: Option<&Value>,
    ours: Option<&'v Value>,
    location: &mut Vec<Step>,
    pointer: &str,
    parent: Option<&'v Map<String, Value>>,
    out: &mut Vec<Difference<'v>>,
) {
    if sample == ours {
        return;
    }
    let here = |out: &mut Vec<Difference<'v>>, location: &[Step]| {
        out.push(Difference {
            location: location.to_vec(),
            pointer: pointer.to_owned(),
            parent,
            ours,
        });
    };
    match (sample, ours) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let names: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for name in names {
                location.push(Step::Member(name.clone()));
                let inner = format!("{pointer}/{}", escape_token(name));
                differences(a.get(name), b.get(name), location, &inner, Some(b), out);
                location.pop();
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            here(out, location);
            for (i, item) in b.iter().enumerate() {
                location.push(Step::Item);
                let inner = format!("{pointer}/{i}");
                differences(a.get(i), Some(item), location, &inner, None, out);
                location.pop();
            }
        }
        _ => here(out, location),
    }
}

/// The candidate tightenings for the near miss `ours` (its `data`), most specific first:
/// only where it differs from its nearest sample.
pub(super) fn candidates(
    samples: &[Value],
    nows: &[Timestamp],
    ours: &Value,
    our_now: Timestamp,
    schema: &Value,
) -> Vec<Tightening> {
    let nearest = samples
        .iter()
        .map(|sample| {
            let mut out = Vec::new();
            differences(
                Some(sample),
                Some(ours),
                &mut Vec::new(),
                "/data",
                None,
                &mut out,
            );
            out
        })
        .min_by_key(Vec::len)
        .unwrap_or_default();
    let mut out = Vec::new();
    for difference in nearest {
        let Some(value) = difference.ours else {
            // A missing member some samples lack too: required beside a sibling's value?
            if let (Some(parent), Some(Step::Member(member))) =
                (difference.parent, difference.location.last())
            {
                let object = &difference.location[..difference.location.len() - 1];
                let fits = conditions(samples, object, member)
                    .into_iter()
                    .find(|(sibling, shared)| parent.get(sibling).is_some_and(|v| v != shared));
                if let Some((sibling, value)) = fits {
                    out.push(Tightening::Required {
                        location: object.to_vec(),
                        member: member.clone(),
                        sibling,
                        value,
                    });
                }
            }
            continue;
        };
        let seen = values_at(samples, &difference.location);
        let Some(here) = schema_at(schema, &difference.location) else {
            continue;
        };
        let location = difference.location.clone();
        if seen.is_empty() {
            if let (Some(parent), Some(Step::Member(member))) =
                (difference.parent, difference.location.last())
            {
                absent(samples, &location, member, parent, &mut out);
            }
            continue;
        }
        match value {
            Value::Number(_) => number(&location, value, &seen, here, &mut out),
            Value::String(text) => {
                if here.get("format") == Some(&json!("date-time"))
                    && !location.contains(&Step::Item)
                {
                    fresh(&difference.pointer, text, our_now, samples, nows, &mut out);
                }
                string(&location, text, &seen, here, &mut out);
            }
            Value::Array(items) => array(&location, items, &seen, &mut out),
            _ => {}
        }
        // A member of the same object that some samples lack may be one that never
        // appears beside this member's value.
        if let (Some(parent), Some(Step::Member(_))) = (difference.parent, location.last()) {
            let object = &location[..location.len() - 1];
            for name in parent.keys() {
                let mut at = object.to_vec();
                at.push(Step::Member(name.clone()));
                absent(samples, &at, name, parent, &mut out);
            }
        }
    }
    out
}

fn number(
    location: &[Step],
    value: &Value,
    seen: &[&Value],
    here: &Value,
    out: &mut Vec<Tightening>,
) {
    let Some(ours) = value.as_f64() else { return };
    let numbers: Vec<f64> = seen.iter().filter_map(|v| v.as_f64()).collect();
    if numbers.is_empty() {
        return;
    }
    // Integers as JSON Schema counts them: `1.0` is one.
    let integral =
        |v: &Value| v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0);
    let all_integers = seen.iter().all(|v| integral(v));
    let keyword = |keyword: &'static str, value: Value| Tightening::Keyword {
        location: location.to_vec(),
        keyword,
        value,
    };
    if all_integers && !integral(value) && here.get("type") != Some(&json!("integer")) {
        out.push(keyword("type", json!("integer")));
    }
    let max = numbers.iter().copied().fold(f64::MIN, f64::max);
    let min = numbers.iter().copied().fold(f64::MAX, f64::min);
    let is_negative_zero = ours == 0.0 && ours.is_sign_negative();
    // The integer next to `value` towards the samples, exactly (`u64`/`i64`), when there is one.
    let step = |delta: i64| -> Option<Value> {
        if let Some(n) = value.as_u64() {
            return n.checked_add_signed(delta).map(Value::from);
        }
        if let Some(n) = value.as_i64() {
            return n.checked_add(delta).map(Value::from);
        }
        let f = ours + delta as f64;
        (f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0).then(|| Value::from(f as i64))
    };
    if ours > max {
        match step(-1) {
            Some(below) if all_integers && integral(value) && below.as_f64() >= Some(max) => {
                out.push(keyword("maximum", below));
            }
            _ => out.push(keyword("exclusiveMaximum", value.clone())),
        }
    }
    if ours < min || (is_negative_zero && min > 0.0) {
        match step(1) {
            Some(above)
                if all_integers
                    && integral(value)
                    && !is_negative_zero
                    && above.as_f64() <= Some(min) =>
            {
                out.push(keyword("minimum", above));
            }
            _ => out.push(keyword("exclusiveMinimum", json!(ours))),
        }
    }
    if all_integers && integral(value) && ours >= min && ours <= max {
        let whole = |v: &Value| v.as_f64().filter(|f| f.abs() < 9e15).map(|f| f as i64);
        let step = seen
            .iter()
            .filter_map(|v| whole(v))
            .fold(0_i64, |g, n| gcd(g, n.abs()));
        if step > 1 && whole(value).is_some_and(|n| n % step != 0) {
            out.push(keyword("multipleOf", json!(step)));
        }
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn string(location: &[Step], text: &str, seen: &[&Value], here: &Value, out: &mut Vec<Tightening>) {
    let texts: Vec<&str> = seen.iter().filter_map(|v| v.as_str()).collect();
    if texts.len() != seen.len() {
        return;
    }
    let length = text.chars().count();
    let longest = texts.iter().map(|t| t.chars().count()).max().unwrap_or(0);
    let shortest = texts.iter().map(|t| t.chars().count()).min().unwrap_or(0);
    let keyword = |keyword: &'static str, value: Value| Tightening::Keyword {
        location: location.to_vec(),
        keyword,
        value,
    };
    let mut lengths = Vec::new();
    if length > longest {
        lengths.push(keyword("maxLength", json!(length - 1)));
    }
    if length < shortest {
        lengths.push(keyword("minLength", json!(length + 1)));
    }
    let pattern = (here.get("format").is_none() && here.get("enum").is_none())
        .then(|| shape(&texts))
        .flatten()
        .and_then(|pattern| {
            let ours = shape(&[text]);
            let fits = ours
                .as_ref()
                .is_some_and(|ours| matches_shape(ours, &pattern));
            // Another structure (separators, letter case, digits) says more than a length.
            let structure = !ours.is_some_and(|ours| same_structure(&ours, &pattern));
            (!fits).then(|| (keyword("pattern", json!(pattern.to_pattern())), structure))
        });
    match pattern {
        Some((pattern, true)) => {
            out.push(pattern);
            out.extend(lengths);
        }
        Some((pattern, false)) => {
            out.extend(lengths);
            out.push(pattern);
        }
        None => out.extend(lengths),
    }
}

fn array(location: &[Step], items: &[Value], seen: &[&Value], out: &mut Vec<Tightening>) {
    let arrays: Vec<&Vec<Value>> = seen.iter().filter_map(|v| v.as_array()).collect();
    let longest = arrays.iter().map(|a| a.len()).max().unwrap_or(0);
    let keyword = |keyword: &'static str, value: Value| Tightening::Keyword {
        location: location.to_vec(),
        keyword,
        value,
    };
    if items.len() > longest {
        out.push(keyword("maxItems", json!(items.len() - 1)));
    }
    let unique = |a: &[Value]| a.iter().enumerate().all(|(i, x)| !a[..i].contains(x));
    if arrays.iter().all(|a| unique(a)) && !unique(items) {
        out.push(keyword("uniqueItems", json!(true)));
    }
}

/// `member` may not appear while a sibling holds the value every sample object lacking
/// `member` holds there (and none that has it), which `ours` holds too.
fn absent(
    samples: &[Value],
    location: &[Step],
    member: &str,
    ours: &Map<String, Value>,
    out: &mut Vec<Tightening>,
) {
    let object = &location[..location.len() - 1];
    let fits = conditions(samples, object, member)
        .into_iter()
        .find(|(sibling, value)| ours.get(sibling) == Some(value));
    if let Some((sibling, value)) = fits {
        out.push(Tightening::Absent {
            location: object.to_vec(),
            member: member.to_owned(),
            sibling,
            value,
        });
    }
}

/// The siblings whose value is the same in every sample object (at `object`) lacking
/// `member`, and different in every one that has it: the conditions under which `member`
/// is left out. Empty values (`[]`, `{}`, `""`, `0`, `false`, `null`) come first: "no
/// advisories, so no score" is likelier than a coincidence of names.
fn conditions(samples: &[Value], object: &[Step], member: &str) -> Vec<(String, Value)> {
    let objects: Vec<&Map<String, Value>> = values_at(samples, object)
        .into_iter()
        .filter_map(Value::as_object)
        .collect();
    let (with, without): (Vec<&&Map<String, Value>>, Vec<_>) =
        objects.iter().partition(|o| o.contains_key(member));
    let (Some(first), false) = (without.first(), with.is_empty()) else {
        return Vec::new();
    };
    let mut found: Vec<(String, Value)> = first
        .iter()
        .filter(|(sibling, value)| {
            *sibling != member
                && without.iter().all(|o| o.get(*sibling) == Some(*value))
                && with.iter().all(|o| o.get(*sibling) != Some(*value))
        })
        .map(|(sibling, value)| (sibling.clone(), value.clone()))
        .collect();
    let empty = |v: &Value| match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
        Value::Null => true,
    };
    found.sort_by_key(|(_, value)| !empty(value));
    found
}

/// A time older (or further ahead) than every sample's: the bound just inside it, cut to
/// whole minutes from a minute up (whole seconds below).
fn fresh(
    field: &str,
    text: &str,
    our_now: Timestamp,
    samples: &[Value],
    nows: &[Timestamp],
    out: &mut Vec<Tightening>,
) {
    let Ok(ours) = text.parse::<Timestamp>() else {
        return;
    };
    // The samples' ages, each against its own request.
    let pointer = field.trim_start_matches("/data");
    let ages: Vec<SignedDuration> = samples
        .iter()
        .zip(nows)
        .filter_map(|(sample, now)| {
            let time: Timestamp = sample.pointer(pointer)?.as_str()?.parse().ok()?;
            Some(now.duration_since(time))
        })
        .collect();

    let (Some(oldest), Some(newest)) = (ages.iter().max(), ages.iter().min()) else {
        return;
    };
    let age = our_now.duration_since(ours);
    let cut = |d: SignedDuration| {
        let secs = d.as_secs();
        let secs = if secs >= 60 { secs - secs % 60 } else { secs };
        SignedDuration::from_secs(secs)
    };
    if age > *oldest {
        let bound = cut(age - SignedDuration::from_nanos(1));
        if bound >= *oldest && bound < age {
            out.push(Tightening::Fresh {
                field: field.to_owned(),
                max_age: Some(bound),
                max_skew: None,
            });
        }
    }
    let ahead = -age;
    let furthest = -*newest;
    if ahead > SignedDuration::ZERO && ahead > furthest {
        let bound = cut(ahead - SignedDuration::from_nanos(1));
        if bound >= furthest.max(SignedDuration::ZERO) && bound < ahead {
            out.push(Tightening::Fresh {
                field: field.to_owned(),
                max_age: None,
                max_skew: Some(bound),
            });
        }
    }
}

/// A duration as contracts write it: `1h 5m`, `15m`, `45s`, `250ms`.
pub(super) fn duration_text(duration: SignedDuration) -> String {
    let mut secs = duration.as_secs();
    let millis = duration.subsec_millis();
    let mut parts = Vec::new();
    for (unit, name) in [(3600, "h"), (60, "m"), (1, "s")] {
        if secs >= unit {
            parts.push(format!("{}{name}", secs / unit));
            secs %= unit;
        }
    }
    if millis > 0 {
        parts.push(format!("{millis}ms"));
    }
    if parts.is_empty() {
        "0s".to_owned()
    } else {
        parts.join(" ")
    }
}
