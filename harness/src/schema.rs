//! Walking a contract's schema by instance location, shared by the adversary, lint and
//! certify: the subschemas that apply at a pointer, and the strings of `enum`/`const`.

use serde_json::Value;

/// The subschemas of a schema `document` that apply at the instance `pointer`, best
/// effort: from the root, `properties` are followed (`prefixItems`/`items`, or a
/// draft-07/2019-09 `items` tuple and `additionalItems`, for array indices), local `$ref`s
/// (`#/…`) resolved and `oneOf`/`anyOf`/`allOf` branches searched.
/// At each step the branches holding the member are kept, in document order, so a
/// keyword is looked up in the first that has it. Empty when the member is not found.
pub fn schema_at<'s>(document: &'s Value, pointer: &str) -> Vec<&'s Value> {
    let mut current = expand(document, document);
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let mut next = Vec::new();
        for schema in &current {
            let member = schema
                .get("properties")
                .and_then(|p| p.get(&token))
                .or_else(|| {
                    let index = token.parse::<usize>().ok()?;
                    // A draft-07/2019-09 tuple is an `items` array, then `additionalItems`.
                    let tuple = |k: &str| schema.get(k).filter(|p| p.is_array());
                    tuple("prefixItems")
                        .or_else(|| tuple("items"))
                        .and_then(|p| p.get(index))
                        .or_else(|| schema.get("items").filter(|i| i.is_object()))
                        .or_else(|| {
                            schema
                                .get("additionalItems")
                                .filter(|i| i.is_object() && tuple("items").is_some())
                        })
                });
            if let Some(member) = member {
                next.extend(expand(document, member));
            }
        }
        if next.is_empty() {
            return next;
        }
        current = next;
    }
    current
}

/// `schema` and what it stands for: its local `$ref` target and its `allOf`/`anyOf`/
/// `oneOf` branches, recursively (bounded: a contract's schema is small).
fn expand<'s>(document: &'s Value, schema: &'s Value) -> Vec<&'s Value> {
    fn walk<'s>(document: &'s Value, schema: &'s Value, depth: usize, out: &mut Vec<&'s Value>) {
        if depth > 16 || out.len() > 256 || !schema.is_object() {
            return;
        }
        out.push(schema);
        if let Some(target) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| document.pointer(p))
        {
            walk(document, target, depth + 1, out);
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = schema.get(key) {
                for branch in branches {
                    walk(document, branch, depth + 1, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(document, schema, 0, &mut out);
    out
}

/// The string values of `keyword` (`enum` arrays, or `const`) across `schemas`, in
/// order, without repeats.
pub fn strings_of(schemas: &[&Value], keyword: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for schema in schemas {
        let values = match schema.get(keyword) {
            Some(Value::Array(items)) if keyword == "enum" => items.iter().collect(),
            Some(v) if keyword != "enum" => vec![v],
            _ => Vec::new(),
        };
        for v in values.into_iter().filter_map(Value::as_str) {
            if !out.iter().any(|o| o == v) {
                out.push(v.to_owned());
            }
        }
    }
    out
}

/// Every string of every `enum` anywhere in `document`, in document order.
pub fn all_enum_strings(document: &Value) -> Vec<String> {
    fn walk<'v>(value: &'v Value, depth: usize, out: &mut Vec<&'v Value>) {
        if depth > 64 {
            return;
        }
        match value {
            Value::Object(map) => {
                if map.get("enum").is_some_and(Value::is_array) {
                    out.push(value);
                }
                map.values().for_each(|v| walk(v, depth + 1, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, depth + 1, out)),
            _ => {}
        }
    }
    let mut schemas = Vec::new();
    walk(document, 0, &mut schemas);
    strings_of(&schemas, "enum")
}
