//! The request's side: a response answering another request id, requests whose
//! parameters disagree with the response (far off, and almost: re-cased, padded, a
//! prefix or an extension of the parameter; the parameter missing or oddly shaped),
//! request times at the freshness edges, to the nanosecond.

use airlock_guard::{CheckSpec, Request};
use serde_json::{json, Value};

use super::times::sub_second_edges;
use super::Builder;
use crate::cases::{Expectation, Upstream};
use crate::corpus::Fixture;

/// request_id_mismatch, binding_mismatch, freshness.
pub(super) fn request_variants(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let origin = fixture.name.as_str();
    let request = &fixture.request;
    let body = |v: &Value| Upstream::Body(serde_json::to_vec(v).unwrap_or_default());

    // An MCP message binds its JSON-RPC id instead (mcp-id).
    if b.is_envelope() && value.get("request_id").is_some() {
        let mut v = value.clone();
        let other = if request.request_id == "req.Mismatch01" {
            "req.Mismatch02"
        } else {
            "req.Mismatch01"
        };
        v["request_id"] = json!(other);
        b.push(
            "request_id_mismatch",
            Some(origin),
            "/request_id",
            "",
            request,
            body(&v),
            Vec::new(),
            Expectation::Reject,
        );
    }

    for (i, check) in b.contract.checks().to_vec().iter().enumerate() {
        // In a vendor document, the member the mapping fills the checked field from.
        let Some(location) = b.source_of(check.field().as_str()) else {
            continue;
        };
        let Some(field_value) = value.pointer(&location) else {
            continue;
        };
        match check {
            CheckSpec::EqualsParam { param, .. } => {
                let mut r = request.clone();
                let other = b.canary("binding_mismatch", origin, &location, i as u32);
                r.params.insert(param.clone(), Value::String(other));
                b.push(
                    "binding_mismatch",
                    Some(origin),
                    &location,
                    &format!("equals_param:{param}"),
                    &r,
                    body(value),
                    Vec::new(),
                    Expectation::Reject,
                );
                near_misses(b, fixture, value, &location, param, false);
            }
            CheckSpec::InParam { param, .. } => {
                let mut r = request.clone();
                let allowed: Vec<Value> = match r.params.get(param) {
                    Some(Value::Array(items)) => items
                        .iter()
                        .filter(|v| *v != field_value)
                        .cloned()
                        .collect(),
                    _ => Vec::new(),
                };
                r.params.insert(param.clone(), Value::Array(allowed));
                b.push(
                    "binding_mismatch",
                    Some(origin),
                    &location,
                    &format!("in_param:{param}"),
                    &r,
                    body(value),
                    Vec::new(),
                    Expectation::Reject,
                );
                near_misses(b, fixture, value, &location, param, true);
            }
            CheckSpec::Fresh {
                max_age, max_skew, ..
            } => {
                let Some(time) = field_value
                    .as_str()
                    .and_then(|s| s.parse::<airlock_guard::jiff::Timestamp>().ok())
                else {
                    continue;
                };
                freshness(b, fixture, value, &location, (time, *max_age, *max_skew));
            }
            _ => {}
        }
    }
}

/// freshness: the request time at the window's edges, the member's time straddling
/// them, and both to the sub-second.
fn freshness(
    b: &mut Builder<'_>,
    fixture: &Fixture,
    value: &Value,
    location: &str,
    (time, max_age, max_skew): (
        airlock_guard::jiff::Timestamp,
        airlock_guard::jiff::SignedDuration,
        airlock_guard::jiff::SignedDuration,
    ),
) {
    let origin = fixture.name.as_str();
    let request = &fixture.request;
    // One case: the fixture's value at `location` (or `field` written there) at `now`.
    let push = |b: &mut Builder<'_>, name: &str, now, field: Option<String>, expect| {
        let mut r = request.clone();
        r.now = now;
        let mut v = value.clone();
        if let (Some(text), Some(slot)) = (field, v.pointer_mut(location)) {
            *slot = Value::String(text);
        }
        let body = Upstream::Body(serde_json::to_vec(&v).unwrap_or_default());
        b.push(
            "freshness",
            Some(origin),
            location,
            name,
            &r,
            body,
            Vec::new(),
            expect,
        );
    };
    for (name, now, expect) in freshness_edges(time, max_age, max_skew) {
        push(b, name, now, None, expect);
    }
    for (name, field, now) in straddles(max_age, max_skew) {
        push(
            b,
            &name,
            now,
            Some(field.to_string()),
            Expectation::Reference,
        );
    }
    for (name, now, field, expect) in sub_second_edges(time, max_age, max_skew) {
        let Some(now) = now else { continue };
        push(b, name, now, field, expect);
    }
}

/// binding_mismatch, almost: the response's value near the parameter (re-cased, padded,
/// a prefix, an extension), and the request's parameter missing or oddly shaped. The
/// reference decides each.
fn near_misses(
    b: &mut Builder<'_>,
    fixture: &Fixture,
    value: &Value,
    location: &str,
    param: &str,
    listed: bool,
) {
    let origin = fixture.name.as_str();
    let request = &fixture.request;
    let Some(Value::String(s)) = value.pointer(location) else {
        return;
    };
    let mut push = |suffix: String, request: &Request, body: Vec<u8>| {
        b.push(
            "binding_mismatch",
            Some(origin),
            location,
            &suffix,
            request,
            Upstream::Body(body),
            Vec::new(),
            Expectation::Reference,
        );
    };
    let flipped = if s.to_uppercase() == *s {
        s.to_lowercase()
    } else {
        s.to_uppercase()
    };
    let mut chars = s.chars();
    chars.next_back();
    let prefix: String = chars.collect();
    let nearly = [
        ("recased", flipped),
        ("leading_space", format!(" {s}")),
        ("trailing_space", format!("{s} ")),
        ("trailing_newline", format!("{s}\n")),
        ("prefix", prefix),
        ("extension", format!("{s}0")),
    ]
    .into_iter()
    .chain(super::neighbours::equivalents(s));
    for (kind, text) in nearly {
        if text == *s {
            continue;
        }
        let mut v = value.clone();
        if let Some(slot) = v.pointer_mut(location) {
            *slot = Value::String(text);
        }
        push(
            format!("near:{kind}:{param}"),
            request,
            serde_json::to_vec(&v).unwrap_or_default(),
        );
    }
    let body = serde_json::to_vec(value).unwrap_or_default();
    // The request's side: the parameter near the response's value (the response as it
    // is), for an adapter that trims, re-cases or folds the parameter before comparing.
    for (kind, text) in request_side(s) {
        let mut r = request.clone();
        let bent = match r.params.get_mut(param) {
            Some(Value::String(p)) if !listed && p == s => {
                *p = text;
                true
            }
            Some(Value::Array(items)) if listed => {
                let mut any = false;
                for item in items.iter_mut().filter(|i| i.as_str() == Some(s.as_str())) {
                    *item = Value::String(text.clone());
                    any = true;
                }
                any
            }
            _ => false,
        };
        if bent {
            push(format!("request:{kind}:{param}"), &r, body.clone());
        }
    }
    let shapes: [(&str, Option<Value>); 6] = [
        ("missing", None),
        ("null", Some(Value::Null)),
        ("number", Some(json!(12345))),
        ("object", Some(json!({ "value": s }))),
        (
            if listed { "scalar" } else { "array" },
            Some(if listed { json!(s) } else { json!([s]) }),
        ),
        (
            if listed {
                "nested_array"
            } else {
                "empty_string"
            },
            Some(if listed { json!([[s]]) } else { json!("") }),
        ),
    ];
    for (kind, shape) in shapes {
        let mut r = request.clone();
        match shape {
            Some(v) => {
                r.params.insert(param.to_owned(), v);
            }
            None => {
                r.params.shift_remove(param);
            }
        }
        push(format!("param_{kind}:{param}"), &r, body.clone());
    }
}

/// The request times on either side of a `fresh` check's bounds for a field holding
/// `time`: one second past `max_age` (stale) and exactly at it, one second beyond
/// `max_skew` in the future and exactly at it. Times out of range are left out.
pub(crate) fn freshness_edges(
    time: airlock_guard::jiff::Timestamp,
    max_age: airlock_guard::jiff::SignedDuration,
    max_skew: airlock_guard::jiff::SignedDuration,
) -> impl Iterator<Item = (&'static str, airlock_guard::jiff::Timestamp, Expectation)> {
    let one = airlock_guard::jiff::SignedDuration::from_secs(1);
    [
        (
            "just_stale",
            time.checked_add(max_age + one),
            Expectation::Reject,
        ),
        (
            "edge_max_age",
            time.checked_add(max_age),
            Expectation::Reference,
        ),
        (
            "just_future",
            time.checked_sub(max_skew + one),
            Expectation::Reject,
        ),
        (
            "edge_max_skew",
            time.checked_sub(max_skew),
            Expectation::Reference,
        ),
    ]
    .into_iter()
    .filter_map(|(name, now, expect)| Some((name, now.ok()?, expect)))
}

/// Midnights (UTC) that an age computed by hand gets wrong: a month's end, a 30-day
/// month's end, the year's end, into and out of a leap day, the century year 2100 (no
/// Feb 29) and 2000 (one).
const BOUNDARIES: [(&str, &str); 7] = [
    ("month_end", "2026-02-01T00:00:00Z"),
    ("thirty_day_month_end", "2026-05-01T00:00:00Z"),
    ("year_end", "2027-01-01T00:00:00Z"),
    ("into_leap_day", "2024-02-29T00:00:00Z"),
    ("leap_day_end", "2024-03-01T00:00:00Z"),
    ("century_2100", "2100-03-01T00:00:00Z"),
    ("century_2000", "2000-03-01T00:00:00Z"),
];

/// A `fresh` field and a request `now` on either side of each of [`BOUNDARIES`]: the
/// field's age one second past `max_age` (`stale`) and one second within it (`fresh`),
/// and the field ahead of `now` by one second past `max_skew` (`future`) and by exactly
/// `max_skew` (`at_skew`). `(suffix, field, now)`; the reference decides (`fresh` and
/// `at_skew` are admitted, the window being inclusive).
pub(crate) fn straddles(
    max_age: airlock_guard::jiff::SignedDuration,
    max_skew: airlock_guard::jiff::SignedDuration,
) -> Vec<(
    String,
    airlock_guard::jiff::Timestamp,
    airlock_guard::jiff::Timestamp,
)> {
    use airlock_guard::jiff::{SignedDuration, Timestamp};
    let one = SignedDuration::from_secs(1);
    let mut out = Vec::new();
    for (name, midnight) in BOUNDARIES {
        let Ok(midnight) = midnight.parse::<Timestamp>() else {
            continue;
        };
        // The field before midnight and `now` after it (an age), or the other way round
        // (a field in the future).
        let mut cases = vec![("stale", max_age + one)];
        if max_age > one {
            cases.push(("fresh", max_age - one));
        }
        let ahead = [("future", max_skew + one), ("at_skew", max_skew)];
        for (kind, age) in cases {
            let half = SignedDuration::from_secs(age.as_secs() / 2);
            let field = midnight.checked_sub(half).ok();
            let now = field.and_then(|f| f.checked_add(age).ok());
            if let (Some(field), Some(now)) = (field, now) {
                out.push((format!("straddle:{name}:{kind}"), field, now));
            }
        }
        for (kind, lead) in ahead {
            if lead.is_zero() {
                continue;
            }
            let half = SignedDuration::from_secs(lead.as_secs() / 2);
            let now = midnight.checked_sub(half).ok();
            let field = now.and_then(|n| n.checked_add(lead).ok());
            if let (Some(field), Some(now)) = (field, now) {
                out.push((format!("straddle:{name}:{kind}"), field, now));
            }
        }
    }
    out
}

/// What a request parameter equal to `s` may be written as by a caller whose adapter
/// would trim, re-case or Unicode-fold it before comparing: re-cased, padded, and the
/// spellings NFKC folds to `s`.
pub(crate) fn request_side(s: &str) -> Vec<(&'static str, String)> {
    let flipped = if s.to_uppercase() == s {
        s.to_lowercase()
    } else {
        s.to_uppercase()
    };
    let mut out = vec![
        ("recased", flipped),
        ("leading_space", format!(" {s}")),
        ("trailing_space", format!("{s} ")),
    ];
    out.extend(super::neighbours::equivalents(s));
    out.retain(|(_, t)| t != s);
    out
}
