//! What `airlock init` infers from sample values: a schema per location (types, small
//! value sets as `enum`, formats every sample has, bounds with headroom, members present
//! in every sample as `required`, every object closed), and the leaves and subschemas
//! the rest of the scaffold names.

use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

use super::Scaffold;
use crate::cases::escape_token;

/// Largest number of distinct values inferred as an `enum`.
const ENUM_MAX: usize = 4;

pub(super) fn depth(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The schema inferred from `values` (all seen at `at`), noting what was guessed.
pub(super) fn infer(values: &[Value], at: &str, scaffold: &mut Scaffold) -> Value {
    let kinds: BTreeSet<&str> = values.iter().map(kind).collect();
    if kinds.len() > 1 {
        let branches: Vec<Value> = kinds
            .iter()
            .map(|k| {
                let same: Vec<Value> = values.iter().filter(|v| kind(v) == *k).cloned().collect();
                infer(&same, at, scaffold)
            })
            .collect();
        scaffold.review.push(format!(
            "{at} holds values of several types: {kinds:?} (anyOf)"
        ));
        return json!({ "anyOf": branches });
    }
    match kinds.first().copied().unwrap_or("null") {
        "object" => {
            let mut names: Vec<String> = Vec::new();
            for v in values {
                for name in v.as_object().into_iter().flat_map(|m| m.keys()) {
                    if !names.contains(name) {
                        names.push(name.clone());
                    }
                }
            }
            let mut properties = Map::new();
            let mut required = Vec::new();
            for name in &names {
                let present: Vec<Value> =
                    values.iter().filter_map(|v| v.get(name)).cloned().collect();
                if present.len() == values.len() {
                    required.push(json!(name));
                }
                let path = format!("{at}/{}", escape_token(name));
                properties.insert(name.clone(), infer(&present, &path, scaffold));
            }
            let mut schema = json!({"type": "object", "additionalProperties": false,
                                    "properties": properties});
            if !required.is_empty() {
                schema["required"] = Value::Array(required);
            }
            schema
        }
        "array" => {
            let items: Vec<Value> = values
                .iter()
                .flat_map(|v| v.as_array().cloned().unwrap_or_default())
                .collect();
            let longest = values
                .iter()
                .filter_map(Value::as_array)
                .map(Vec::len)
                .max()
                .unwrap_or(0);
            if items.is_empty() {
                // No sample shows an item: nothing is known of what one may hold, so
                // none is admitted (an open `items` would hand the agent anything).
                scaffold.review.push(format!(
                    "{at} is empty in every sample: the contract admits only an empty array; \
                     give a sample with items (or write `items` by hand)"
                ));
                return json!({"type": "array", "maxItems": 0});
            }
            let max_items = (longest * 2).max(4);
            scaffold.inferred.push(format!(
                "{at}: array, maxItems {max_items} (2 × the longest sample)"
            ));
            json!({"type": "array", "maxItems": max_items,
                   "items": infer(&items, &format!("{at}/0"), scaffold)})
        }
        "string" => infer_string(values, at, scaffold),
        "integer" => {
            let mut schema = json!({"type": "integer"});
            if values.iter().all(|v| v.as_f64().is_some_and(|n| n >= 0.0)) {
                schema["minimum"] = json!(0);
            }
            schema
        }
        "number" => json!({"type": "number"}),
        "boolean" => json!({"type": "boolean"}),
        _ => json!({"type": "null"}),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        // `1.0` and `4e0` are integers too, as JSON Schema counts them.
        Value::Number(n)
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) =>
        {
            "integer"
        }
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Null => "null",
    }
}

fn infer_string(values: &[Value], at: &str, scaffold: &mut Scaffold) -> Value {
    let texts: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
    let longest = texts.iter().map(|t| t.chars().count()).max().unwrap_or(0);
    let max_length = (longest * 2).max(16).next_multiple_of(8);
    let all = |f: &dyn Fn(&str) -> bool| !texts.is_empty() && texts.iter().all(|t| f(t));
    let format = if all(&|t| t.contains('T') && t.parse::<airlock_guard::jiff::Timestamp>().is_ok())
    {
        Some("date-time")
    } else if all(&is_uuid) {
        Some("uuid")
    } else if all(&|t| {
        t.split_once('@')
            .is_some_and(|(a, d)| !a.is_empty() && d.contains('.') && !t.contains(' '))
    }) {
        Some("email")
    } else if all(&|t| {
        t.split_once("://").is_some_and(|(s, r)| {
            !s.is_empty()
                && s.chars().all(|c| c.is_ascii_alphabetic())
                && !r.is_empty()
                && !t.contains(' ')
        })
    }) {
        Some("uri")
    } else {
        None
    };
    if let Some(format) = format {
        scaffold.inferred.push(format!(
            "{at}: string, format {format} (every sample), maxLength {max_length}"
        ));
        return json!({"type": "string", "format": format, "maxLength": max_length});
    }
    let distinct: BTreeSet<&str> = texts.iter().copied().collect();
    let identifier = |t: &str| {
        !t.is_empty()
            && t.len() <= 32
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    // One repeated value is more likely an id than a set: never an enum of one.
    if (2..=ENUM_MAX).contains(&distinct.len())
        && texts.len() > distinct.len()
        && distinct.iter().all(|t| identifier(t))
    {
        scaffold.review.push(format!(
            "{at}: enum {distinct:?} guessed from repeated values: add the values the tool can also return"
        ));
        return json!({"enum": distinct.into_iter().collect::<Vec<_>>()});
    }
    let min_length = usize::from(texts.iter().all(|t| !t.is_empty()));
    scaffold.inferred.push(format!(
        "{at}: string, maxLength {max_length} (2 × the longest sample, at least 16)"
    ));
    json!({"type": "string", "minLength": min_length, "maxLength": max_length})
}

fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups
            .iter()
            .all(|g| g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The JSON pointers of the leaf members of `value` (arrays are leaves) under `at`.
pub(super) fn leaves_of(value: &Value, at: &str) -> Vec<String> {
    match value {
        Value::Object(map) if !map.is_empty() => map
            .iter()
            .flat_map(|(k, v)| leaves_of(v, &format!("{at}/{}", escape_token(k))))
            .collect(),
        _ => vec![at.to_owned()],
    }
}

/// The inferred subschema at the data pointer `field`.
pub(super) fn schema_of<'s>(data_schema: &'s Value, field: &str) -> Option<&'s Value> {
    let mut at = data_schema;
    for token in field.trim_start_matches("/data").split('/').skip(1) {
        at = at
            .get("properties")?
            .get(token.replace("~1", "/").replace("~0", "~"))?;
    }
    Some(at)
}
