//! What the subschemas at one location say, read alike by the structural walk and the
//! keyword comparisons: a local `$ref` followed, a keyword's first value, whether the
//! object is closed, and a branch as comparable text.

use serde_json::{Map, Value};

/// A local `$ref`'s target.
pub(crate) fn resolve<'s>(document: &'s Value, schema: &'s Value) -> Option<&'s Value> {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|p| document.pointer(p))
}

/// The first value of `keyword` among the subschemas at a location.
pub(crate) fn keyword<'s>(schemas: &[&'s Value], keyword: &str) -> Option<&'s Value> {
    schemas.iter().find_map(|s| s.get(keyword))
}

/// Whether the subschemas at a location close their object to undeclared members.
pub(super) fn closed(schemas: &[&Value]) -> bool {
    schemas.iter().any(|s| {
        s.get("additionalProperties") == Some(&Value::Bool(false))
            || s.get("unevaluatedProperties") == Some(&Value::Bool(false))
    })
}

/// Annotations: they change no verdict.
pub(super) const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "examples",
    "default",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$id",
    "$anchor",
];

/// A branch as comparable text: its `$ref` followed, annotations dropped, members sorted.
pub(super) fn normal(document: &Value, schema: &Value, depth: usize) -> Value {
    let schema = match resolve(document, schema) {
        Some(target) if depth < 16 && schema.as_object().is_some_and(|m| m.len() == 1) => {
            return normal(document, target, depth + 1)
        }
        _ => schema,
    };
    match schema {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                if !ANNOTATIONS.contains(&k.as_str()) {
                    out.insert(k.clone(), normal(document, &map[k], depth + 1));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| normal(document, i, depth + 1))
                .collect(),
        ),
        other => other.clone(),
    }
}
