//! Values at the edges a schema allows, and their nearest wrong neighbours, in every
//! style an adapter might count or parse differently: strings of exactly `minLength` and
//! `maxLength` code points built from 1-, 2-, 3- and 4-byte UTF-8 characters and from
//! white space; date-times (built in [`super::times`]); numbers at inclusive bounds, just inside exclusive ones and on `multipleOf` steps;
//! arrays of exactly `minItems` and `maxItems`; a body of exactly `max_bytes` made of
//! multi-byte text. The valid ones are class `boundary_valid`; each neighbour goes to the
//! class of its family (`string_edge`, `date_time_neighbour`, `number_edge`,
//! `array_edge`, `exact_limit`). The reference decides every verdict.

use serde_json::Value;

use super::times::{calendar_trials, date_time_trials, following, fraction_to_max_length};
use super::trial::Trial;
use super::{bind_along, Builder};
use crate::cases::{escape_token, member_pointers, splice, Expectation, Upstream};
use crate::corpus::Fixture;

/// Characters of 1, 2, 3 and 4 UTF-8 bytes (each one code point, the last two UTF-16
/// units).
pub(crate) const WIDTHS: [(usize, char); 4] = [(1, 'a'), (2, 'é'), (3, '€'), (4, '😀')];

/// boundary_valid and the one-past neighbours of every member of `value`.
pub(super) fn boundaries(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let mut widest: Option<(String, usize)> = None;
    for (parent, name) in member_pointers(value) {
        let location = format!("{parent}/{}", escape_token(&name));
        let Some(original) = value.pointer(&location) else {
            continue;
        };
        let schemas = b.schemas_at(&location);
        if schemas.is_empty() {
            continue;
        }
        let fresh = b.contract.checks().iter().any(|check| {
            matches!(check, airlock_guard::CheckSpec::Fresh { .. })
                && b.source_of(check.field().as_str()).as_deref() == Some(location.as_str())
        });
        let keyword = |k: &str| schemas.iter().find_map(|s| s.get(k));
        let number = |k: &str| keyword(k).and_then(Value::as_f64);
        let mut trials = Vec::new();
        match original {
            Value::String(s) => {
                let free = ["pattern", "format", "enum", "const"]
                    .iter()
                    .all(|k| keyword(k).is_none());
                if free {
                    let max = number("maxLength")
                        .map(|m| m as usize)
                        .filter(|m| *m < 64 * 1024);
                    let min = number("minLength").map_or(0, |m| m as usize);
                    string_trials(min, max, &mut trials);
                    if let Some(max) = max {
                        if widest.as_ref().is_none_or(|(_, m)| *m < max) {
                            widest = Some((location.clone(), max));
                        }
                    }
                } else if keyword("format").and_then(Value::as_str) == Some("date-time") {
                    date_time_trials(s, &mut trials);
                    calendar_trials(s, fresh, &mut trials);
                    let max = number("maxLength").map(|m| m as usize);
                    fraction_to_max_length(s, max, &mut trials);
                }
            }
            Value::Number(_) => {
                let integer = schemas
                    .iter()
                    .any(|s| s.get("type").and_then(Value::as_str) == Some("integer"));
                number_trials(original, integer, &number, &mut trials);
            }
            Value::Array(items) => {
                let unique = keyword("uniqueItems").and_then(Value::as_bool) == Some(true);
                let min = number("minItems").map(|m| m as usize);
                let max = number("maxItems")
                    .map(|m| m as usize)
                    .filter(|m| *m <= 1024);
                array_trials(items, min, max, unique, &mut trials);
            }
            _ => {}
        }
        for trial in trials {
            let Some(bytes) = splice(value, &location, trial.raw.as_bytes()) else {
                continue;
            };
            let new: Option<Value> = serde_json::from_str(&trial.raw).ok();
            // At a `fresh` member the request's `now` moves with a date-time's instant, and
            // a bound variant starts from that request too.
            let request = match (fresh, &trial.instant, original.as_str()) {
                (true, Some(instant), Some(original)) => {
                    following(&fixture.request, original, instant)
                }
                _ => fixture.request.clone(),
            };
            b.push(
                trial.class,
                Some(&fixture.name),
                &location,
                &trial.suffix,
                &request,
                Upstream::Body(bytes.clone()),
                Vec::new(),
                Expectation::Reference,
            );
            // A bound member: the request follows, so the schema stage decides.
            let bound = new.and_then(|new| bind_along(b, &request, &location, original, &new));
            if let Some(request) = bound {
                b.push(
                    trial.class,
                    Some(&fixture.name),
                    &location,
                    &format!("{}+bound_request", trial.suffix),
                    &request,
                    Upstream::Body(bytes),
                    Vec::new(),
                    Expectation::Reference,
                );
            }
        }
    }
    if let Some((location, max)) = widest {
        multibyte_exact_limit(b, fixture, value, &location, max);
    }
}

fn string_trials(min: usize, max: Option<usize>, out: &mut Vec<Trial>) {
    for (width, c) in WIDTHS {
        let text = |n: usize| std::iter::repeat_n(c, n).collect::<String>();
        if let Some(max) = max {
            out.push(Trial::string(
                "boundary_valid",
                format!("max_length:{width}byte"),
                &text(max),
            ));
            out.push(Trial::string(
                "string_edge",
                format!("one_past_max_length:{width}byte"),
                &text(max + 1),
            ));
        }
        if min > 0 {
            out.push(Trial::string(
                "boundary_valid",
                format!("min_length:{width}byte"),
                &text(min),
            ));
            out.push(Trial::string(
                "string_edge",
                format!("one_below_min_length:{width}byte"),
                &text(min - 1),
            ));
        }
    }
    let blank = min.max(1);
    if max.is_none_or(|max| blank <= max) {
        out.push(Trial::string(
            "boundary_valid",
            "whitespace_only",
            &" ".repeat(blank),
        ));
    }
    // White space around text: an adapter that trims before counting, or at all.
    let around = min.max(3);
    if max.is_none_or(|max| around <= max) {
        let text = format!(" {}\t", "a".repeat(around - 2));
        out.push(Trial::string(
            "boundary_valid",
            "surrounding_whitespace",
            &text,
        ));
    }
}

/// The number text of `x`: an integer when it is one (and `integer`), else the shortest
/// round-trip decimal.
fn number_text(x: f64, integer: bool) -> String {
    if integer && x.fract() == 0.0 && x.abs() < 9.0e15 {
        format!("{}", x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or_else(|| "0".into(), |n| n.to_string())
    }
}

/// The next representable number above `x` (below with `up` false).
fn next_float(x: f64, up: bool) -> f64 {
    if x == 0.0 {
        let tiny = f64::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let bits = x.to_bits();
    let away = (x > 0.0) == up;
    f64::from_bits(if away { bits + 1 } else { bits - 1 })
}

fn number_trials(
    original: &Value,
    integer: bool,
    number: &dyn Fn(&str) -> Option<f64>,
    out: &mut Vec<Trial>,
) {
    let step_of = |x: f64, up: bool| match (integer, number("multipleOf")) {
        (_, Some(m)) => {
            if up {
                x + m
            } else {
                x - m
            }
        }
        (true, None) => {
            if up {
                x + 1.0
            } else {
                x - 1.0
            }
        }
        (false, None) => next_float(x, up),
    };
    let text = |x: f64| number_text(x, integer);
    let mut valid = |suffix: &str, x: f64| {
        out.push(Trial::new("boundary_valid", suffix, text(x)));
    };
    if let Some(min) = number("minimum") {
        valid("minimum", min);
    }
    if let Some(max) = number("maximum") {
        valid("maximum", max);
    }
    if let Some(min) = number("exclusiveMinimum") {
        valid("exclusive_minimum_next", step_of(min, true));
    }
    if let Some(max) = number("exclusiveMaximum") {
        valid("exclusive_maximum_next", step_of(max, false));
    }
    if let (Some(m), Some(x)) = (number("multipleOf"), original.as_f64()) {
        valid("multiple_of_next", x + m);
    }
    let mut wrong = |suffix: &str, raw: String| out.push(Trial::new("number_edge", suffix, raw));
    if let Some(min) = number("minimum") {
        wrong("minimum_one_step_below", text(step_of(min, false)));
    }
    if let Some(max) = number("maximum") {
        wrong("maximum_one_step_above", text(step_of(max, true)));
    }
    if let Some(min) = number("exclusiveMinimum") {
        wrong("exclusive_minimum_itself", text(min));
    }
    if let Some(max) = number("exclusiveMaximum") {
        wrong("exclusive_maximum_itself", text(max));
    }
    if let (Some(m), Some(x)) = (number("multipleOf"), original.as_f64()) {
        wrong("multiple_of_half_step", number_text(x + m / 2.0, false));
    }
    let plain = original.to_string();
    if original.is_u64() || original.is_i64() {
        wrong("integer_as_decimal", format!("{plain}.0"));
        wrong("integer_as_exponent", format!("{plain}e0"));
        wrong("integer_as_upper_exponent", format!("{plain}E+0"));
    }
    wrong("negative_zero", "-0".into());
    wrong("negative_zero_decimal", "-0.0".into());
    wrong("two_pow_53_plus_1", "9007199254740993".into());
    wrong("exponent_1e2", "1e2".into());
}

fn array_trials(
    items: &[Value],
    min: Option<usize>,
    max: Option<usize>,
    unique: bool,
    out: &mut Vec<Trial>,
) {
    let Some(last) = items.last() else { return };
    let raw = |n: usize| {
        let mut v: Vec<Value> = items.iter().take(n).cloned().collect();
        v.resize(n, last.clone());
        Value::Array(v).to_string()
    };
    // Growing by repeats only stays valid without uniqueItems.
    if let Some(max) = max.filter(|m| *m >= items.len() && (!unique || *m == items.len())) {
        out.push(Trial::new("boundary_valid", "max_items", raw(max)));
    }
    if let Some(min) = min.filter(|m| *m <= items.len()) {
        out.push(Trial::new("boundary_valid", "min_items", raw(min)));
        if min > 0 {
            out.push(Trial::new(
                "array_edge",
                "one_below_min_items",
                raw(min - 1),
            ));
        }
    }
    if unique {
        let mut v = items.to_vec();
        v.push(items[0].clone());
        out.push(Trial::new(
            "array_edge",
            "duplicate_item",
            Value::Array(v).to_string(),
        ));
    }
}

/// exact_limit#multibyte: the widest free string filled with 4-byte characters, the body
/// then padded with white space to exactly `max_bytes`.
fn multibyte_exact_limit(
    b: &mut Builder<'_>,
    fixture: &Fixture,
    value: &Value,
    location: &str,
    max_length: usize,
) {
    let max_bytes = usize::try_from(b.contract.limits().max_bytes).unwrap_or(usize::MAX);
    if max_bytes > 16 * 1024 * 1024 {
        return;
    }
    let base = serde_json::to_vec(value).unwrap_or_default().len();
    let old = value.pointer(location).map_or(0, |v| v.to_string().len());
    let room = max_bytes.saturating_sub(base.saturating_sub(old) + 2) / 4;
    let n = max_length.min(room);
    if n == 0 {
        return;
    }
    let text = Value::String(std::iter::repeat_n('😀', n).collect()).to_string();
    let Some(bytes) = splice(value, location, text.as_bytes()) else {
        return;
    };
    if bytes.len() > max_bytes {
        return;
    }
    // Padded with white space to exactly the limit and one byte past it: with far fewer
    // characters than bytes, which an adapter that measures the body in characters admits.
    let bytes: std::sync::Arc<[u8]> = bytes.into();
    let pad = |len: usize| super::padded(&bytes, len);
    b.push_later(
        "exact_limit",
        Some(&fixture.name),
        location,
        "multibyte",
        &fixture.request,
        pad(max_bytes),
        Vec::new(),
        Expectation::Reference,
    );
    b.push_later(
        "oversize",
        Some(&fixture.name),
        location,
        "multibyte_one_past",
        &fixture.request,
        pad(max_bytes + 1),
        Vec::new(),
        Expectation::Reject,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_strings_have_the_stated_code_points_and_utf8_width() {
        let mut trials = Vec::new();
        string_trials(2, Some(5), &mut trials);
        for trial in &trials {
            let Value::String(text) = serde_json::from_str::<Value>(&trial.raw).unwrap() else {
                panic!("{}", trial.raw);
            };
            let Some((what, width)) = trial.suffix.split_once(':') else {
                continue;
            };
            let width: usize = width.trim_end_matches("byte").parse().unwrap();
            let n = match what {
                "max_length" => 5,
                "one_past_max_length" => 6,
                "min_length" => 2,
                "one_below_min_length" => 1,
                other => panic!("{other}"),
            };
            assert_eq!(text.chars().count(), n, "{}", trial.suffix);
            assert_eq!(text.len(), n * width, "{}", trial.suffix);
        }
        assert_eq!(
            trials
                .iter()
                .filter(|t| t.class == "boundary_valid")
                .count(),
            10
        );
    }

    #[test]
    fn number_neighbours_sit_one_step_past_each_bound() {
        let schema = serde_json::json!({"minimum": 0, "maximum": 10, "exclusiveMinimum": -1, "multipleOf": 2});
        let number = |k: &str| schema.get(k).and_then(Value::as_f64);
        let mut trials = Vec::new();
        number_trials(&serde_json::json!(4), true, &number, &mut trials);
        let raw = |suffix: &str| {
            trials
                .iter()
                .find(|t| t.suffix == suffix)
                .map(|t| t.raw.clone())
                .unwrap()
        };
        assert_eq!(raw("minimum"), "0");
        assert_eq!(raw("maximum_one_step_above"), "12");
        assert_eq!(raw("minimum_one_step_below"), "-2");
        assert_eq!(raw("multiple_of_next"), "6");
        assert_eq!(raw("multiple_of_half_step"), "5.0");
        assert_eq!(raw("integer_as_decimal"), "4.0");
        assert_eq!(next_float(1.0, true), 1.0000000000000002);
    }
}
