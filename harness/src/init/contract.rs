//! The contract a scaffold is: its envelope and request-id pattern, its manifest (limits,
//! agent fields, binding and freshness checks), the bindings the samples show, and a
//! guard for the scaffold as it stands while near misses are learned.

use airlock_guard::jiff::{SignedDuration, Timestamp};
use airlock_guard::{CheckSpec, Contract, Guard, Limits, Pointer, Request};
use serde_json::{json, Value};
use std::fmt::Write as _;

use super::{learn, InitError, Scaffold};

/// Binding checks: a string or number field equal, in every sample, to a parameter
/// (`equals_param`) or held by an array parameter (`in_param`). (kind, field, param).
/// A field equal to a parameter in some samples only is not bound, and the review says
/// so.
pub(super) fn bindings(
    data: &[Value],
    requests: &[Request],
    fields: &[String],
    scaffold: &mut Scaffold,
) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    let Some(first) = requests.first() else {
        return out;
    };
    for field in fields {
        let pointer = field.trim_start_matches("/data");
        let values: Vec<&Value> = data.iter().filter_map(|d| d.pointer(pointer)).collect();
        let bindable = |v: &&Value| v.is_string() || v.is_number();
        if values.len() != data.len() || !values.iter().all(bindable) {
            continue;
        }
        let mut partial = Vec::new();
        for param in first.params.keys() {
            let given = |i: usize| requests[i].params.get(param);
            let equal = |(i, v): (usize, &&Value)| given(i) == Some(*v);
            let held = |(i, v): (usize, &&Value)| {
                given(i)
                    .and_then(Value::as_array)
                    .is_some_and(|items| items.contains(v))
            };
            let kind = if values.iter().enumerate().all(equal) {
                "equals_param"
            } else if values.iter().enumerate().all(held) {
                "in_param"
            } else {
                let matching = values.iter().enumerate().filter(|&p| equal(p)).count();
                if matching > 0 {
                    partial.push(format!(
                        "{field}: not bound to {param}: equal in {matching} of {} samples (bind it in contract.toml if it must always be)",
                        values.len()
                    ));
                }
                continue;
            };
            scaffold.inferred.push(format!(
                "{field}: {kind} {param} (every sample matches the request)"
            ));
            out.push((kind, field.clone(), param.clone()));
            partial.clear();
            break;
        }
        scaffold.review.append(&mut partial);
    }
    out
}

/// The request-id pattern of a scaffold: the alphabets of common ids (letters, digits,
/// `_ . : -`: UUIDs, ULIDs, `req.pr4711-0001`), widened by any other visible ASCII
/// character the samples' own ids use, 1 to 128 characters; the first a letter or digit
/// (or the first character of a sample's id).
pub(super) fn request_id_pattern<'r>(ids: impl IntoIterator<Item = &'r str>) -> String {
    let mut first = std::collections::BTreeSet::new();
    let mut rest = std::collections::BTreeSet::new();
    let common = |c: char| c.is_ascii_alphanumeric() || "_.:-".contains(c);
    for id in ids {
        for (i, c) in id.chars().enumerate() {
            if c.is_ascii_graphic() && !common(c) {
                rest.insert(c);
                if i == 0 {
                    first.insert(c);
                }
            } else if i == 0 && !c.is_ascii_alphanumeric() && common(c) {
                first.insert(c);
            }
        }
    }
    // Inside a class only `\ ] [ ^ -` are special; `-` is escaped as well.
    let class = |set: &std::collections::BTreeSet<char>| {
        set.iter().fold(String::new(), |mut out, c| {
            if "\\][^-".contains(*c) {
                out.push('\\');
            }
            out.push(*c);
            out
        })
    };
    format!(
        "^[A-Za-z0-9{}][A-Za-z0-9_.:{}\\-]{{0,127}}$",
        class(&first),
        class(&rest)
    )
}

/// The closed envelope with `data` as the success payload and `request_id` the pattern
/// of its request ids.
pub(super) fn envelope(tool: &str, data: Value, request_id: &str) -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": format!("{tool} response, version 1 (scaffolded by airlock init: review it)"),
        "oneOf": [{"$ref": "#/$defs/success"}, {"$ref": "#/$defs/failure"}],
        "$defs": {
            "tool": {"const": tool},
            "request_id": {"type": "string", "pattern": request_id},
            "success": {
                "type": "object",
                "additionalProperties": false,
                "required": ["tool", "request_id", "outcome", "data"],
                "properties": {
                    "tool": {"$ref": "#/$defs/tool"},
                    "request_id": {"$ref": "#/$defs/request_id"},
                    "outcome": {"const": "success"},
                    "data": {"$ref": "#/$defs/data"}
                }
            },
            "failure": {
                "type": "object",
                "additionalProperties": false,
                "required": ["tool", "request_id", "outcome", "error"],
                "properties": {
                    "tool": {"$ref": "#/$defs/tool"},
                    "request_id": {"$ref": "#/$defs/request_id"},
                    "outcome": {"const": "failure"},
                    "error": {"$ref": "#/$defs/error"}
                }
            },
            "error": {
                "type": "object",
                "additionalProperties": false,
                "required": ["code", "retryable"],
                "properties": {
                    "code": {"enum": ["NOT_FOUND", "UPSTREAM_UNAVAILABLE", "INVALID_RESPONSE"]},
                    "retryable": {"type": "boolean"}
                }
            },
            "data": data
        }
    })
}

/// The manifest: `input` (the `[input]` tables, empty for an envelope contract) after
/// the version, then the limits, agent fields, checks and retry policy.
pub(super) fn manifest(
    tool: &str,
    input: &str,
    Limits {
        max_bytes,
        max_depth,
    }: Limits,
    fields: &[String],
    checks: &[(&'static str, String, String)],
    fresh: &[(String, SignedDuration, SignedDuration)],
) -> String {
    // TOML strings, never Rust debug escapes (`\u{202e}` is not TOML): a member name may
    // hold any character a sample's JSON holds.
    let q = |text: &str| toml_string(text);
    let mut out = format!(
        "# Scaffolded by `airlock init` from sample responses: review every line.\n\
         tool = {}\nversion = 1\n\n{input}[limits]\nmax_bytes = {max_bytes}\nmax_depth = {max_depth}\n\n\
         [agent]\nfields = [{}]\n",
        q(tool),
        fields.iter().map(|f| q(f)).collect::<Vec<_>>().join(", ")
    );
    for (kind, field, param) in checks {
        let _ = write!(
            out,
            "\n[[checks]]\nkind = {}\nfield = {}\nparam = {}\n",
            q(kind),
            q(field),
            q(param)
        );
    }
    for (field, max_age, max_skew) in fresh {
        let _ = write!(
            out,
            "\n[[checks]]\nkind = \"fresh\"\nfield = {}\nmax_age = {}\nmax_skew = {}\n",
            q(field),
            q(&learn::duration_text(*max_age)),
            q(&learn::duration_text(*max_skew))
        );
    }
    out.push_str(
        "\n[retry]\nmax_attempts = 3\ndeadline = \"10s\"\nretryable = [\"UPSTREAM_UNAVAILABLE\"]\n",
    );
    out
}

/// A TOML string, never a Rust debug escape (`\u{202e}` is not TOML): a member name may
/// hold any character a sample's JSON holds.
pub(super) fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// A guard for the scaffold as it stands (in memory): the envelope around `data_schema`,
/// the binding checks and the learned freshness windows.
#[allow(clippy::too_many_arguments)]
pub(super) fn trial_guard(
    tool: &str,
    (data_schema, id_pattern): (&Value, &str),
    limits: Limits,
    fields: &[String],
    checks: &[(&'static str, String, String)],
    fresh: &[learn::FreshBounds],
    data: &[Value],
    nows: &[Timestamp],
) -> Result<Guard, InitError> {
    let schema = envelope(tool, data_schema.clone(), id_pattern);
    let mut builder = Contract::builder(tool, schema).limits(limits);
    for field in fields {
        builder = builder.agent_field(field.clone());
    }
    let pointer = |f: &str| {
        Pointer::parse(f).map_err(|reason| InitError::ScaffoldField {
            field: f.to_owned(),
            reason,
        })
    };
    for (kind, field, param) in checks {
        let (field, param) = (pointer(field)?, param.clone());
        builder = builder.check(if *kind == "equals_param" {
            CheckSpec::EqualsParam { field, param }
        } else {
            CheckSpec::InParam { field, param }
        });
    }
    for (field, max_age, max_skew) in fresh_specs(fresh, data, nows) {
        builder = builder.check(CheckSpec::Fresh {
            field: pointer(&field)?,
            max_age,
            max_skew,
        });
    }
    builder.build().map(Guard::new).map_err(InitError::Scaffold)
}

/// The learned windows with their unlearned side filled in: an age of whole hours past the
/// oldest sample (at least a day), a skew of whole minutes past the furthest ahead (at
/// least a minute).
pub(super) fn fresh_specs(
    fresh: &[learn::FreshBounds],
    data: &[Value],
    nows: &[Timestamp],
) -> Vec<(String, SignedDuration, SignedDuration)> {
    fresh
        .iter()
        .map(|bounds| {
            let pointer = bounds.field.trim_start_matches("/data");
            let ages: Vec<SignedDuration> = data
                .iter()
                .zip(nows)
                .filter_map(|(d, now)| {
                    let time: Timestamp = d.pointer(pointer)?.as_str()?.parse().ok()?;
                    Some(now.duration_since(time))
                })
                .collect();
            let up = |d: SignedDuration, unit: i64, least: i64| {
                let secs = d.as_secs().max(0);
                SignedDuration::from_secs(((secs / unit) + 1).max(least) * unit)
            };
            let oldest = ages.iter().max().copied().unwrap_or_default();
            let ahead = ages.iter().min().map(|a| -*a).unwrap_or_default();
            (
                bounds.field.clone(),
                bounds.max_age.unwrap_or_else(|| up(oldest, 3600, 24)),
                bounds.max_skew.unwrap_or_else(|| up(ahead, 60, 1)),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::request_id_pattern;

    #[test]
    fn the_request_id_pattern_admits_common_ids_and_the_samples_own() {
        let pattern = request_id_pattern(["req.Sample0001"]);
        let re = regex::Regex::new(&pattern).unwrap();
        for id in [
            "req.pr4711-0001",
            "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
            "01ARZ3NDEKTSV4RRFFQ69G5FAV",
            "job:42",
            "a",
        ] {
            assert!(re.is_match(id), "{pattern} refuses {id}");
        }
        for id in ["", " req", "req 1", "-leading", "a\nb", &"x".repeat(129)] {
            assert!(!re.is_match(id), "{pattern} admits {id:?}");
        }
        // A sample's own characters are admitted, escaped inside the class.
        let pattern = request_id_pattern(["_req/1]^"]);
        let re = regex::Regex::new(&pattern).unwrap();
        assert!(re.is_match("_req/1]^"), "{pattern}");
        assert!(!re.is_match("req 1"), "{pattern}");
    }
}
