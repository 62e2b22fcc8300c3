//! Schema text checks made at load: every pattern compiles on the linear-time engine,
//! and which members a schema can contain (for agent fields and checks).

use serde_json::Value;

use super::SchemaError;

/// Keywords whose values are data, not schemas: never searched for patterns.
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "examples", "default"];

/// Refuse, by name, every pattern the linear-time engine cannot compile.
pub(super) fn check_patterns(schema: &Value) -> Result<(), SchemaError> {
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                for (key, value) in map {
                    if DATA_KEYWORDS.contains(&key.as_str()) {
                        continue;
                    }
                    match (key.as_str(), value) {
                        ("pattern", Value::String(p)) => compile_pattern(p)?,
                        ("patternProperties", Value::Object(props)) => {
                            for p in props.keys() {
                                compile_pattern(p)?;
                            }
                        }
                        _ => {}
                    }
                    stack.push(value);
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn compile_pattern(pattern: &str) -> Result<(), SchemaError> {
    regex::Regex::new(pattern).map(drop).map_err(|e| match e {
        regex::Error::CompiledTooBig(limit) => SchemaError::PatternTooBig {
            pattern: pattern.to_owned(),
            limit,
        },
        e => SchemaError::Pattern {
            pattern: pattern.to_owned(),
            reason: e
                .to_string()
                .lines()
                .last()
                .unwrap_or_default()
                .trim()
                .to_owned(),
        },
    })
}

/// Whether an instance valid under `schema` can hold a member at `tokens`.
///
/// Follows `properties`, `patternProperties`, schema-valued `additionalProperties`,
/// `items`/`prefixItems` (and draft-07/2019-09 tuples: `items` arrays, `additionalItems`),
/// local `$ref`s and the in-place applicators. A name no branch
/// declares is possible only where no branch closes the object.
pub(crate) fn can_contain(root: &Value, tokens: &[String]) -> bool {
    can_contain_at(root, root, tokens, 0)
}

fn can_contain_at(root: &Value, schema: &Value, tokens: &[String], hops: usize) -> bool {
    if hops > 64 {
        return true; // a reference cycle: stay permissive rather than loop
    }
    let Some((token, rest)) = tokens.split_first() else {
        return schema != &Value::Bool(false);
    };
    match schema {
        Value::Bool(allowed) => return *allowed,
        Value::Object(_) => {}
        _ => return true,
    }
    let mut in_place = Vec::new();
    collect_in_place(root, schema, &mut in_place, hops);
    let mut declared = false;
    let mut closed = false;
    for node in &in_place {
        let Some(node) = node.as_object() else {
            continue;
        };
        if let Some(sub) = node.get("properties").and_then(|p| p.get(token)) {
            declared = true;
            if can_contain_at(root, sub, rest, hops + 1) {
                return true;
            }
        }
        if let Some(Value::Object(patterns)) = node.get("patternProperties") {
            for (pattern, sub) in patterns {
                if regex::Regex::new(pattern).is_ok_and(|r| r.is_match(token)) {
                    declared = true;
                    if can_contain_at(root, sub, rest, hops + 1) {
                        return true;
                    }
                }
            }
        }
        // `items` as an array (a draft-07/2019-09 tuple) is `prefixItems`, below.
        for keyword in [
            "items",
            "additionalItems",
            "additionalProperties",
            "unevaluatedProperties",
        ] {
            match node.get(keyword) {
                Some(Value::Bool(false)) if keyword.ends_with("Properties") => closed = true,
                Some(sub @ Value::Object(_)) => {
                    declared = true;
                    if can_contain_at(root, sub, rest, hops + 1) {
                        return true;
                    }
                }
                _ => {}
            }
        }
        for keyword in ["prefixItems", "items"] {
            let Some(Value::Array(prefix)) = node.get(keyword) else {
                continue;
            };
            if let Some(sub) = token.parse::<usize>().ok().and_then(|i| prefix.get(i)) {
                declared = true;
                if can_contain_at(root, sub, rest, hops + 1) {
                    return true;
                }
            }
        }
    }
    !declared && !closed
}

/// `schema` and every schema applied to the same instance location with it.
fn collect_in_place<'a>(root: &'a Value, schema: &'a Value, out: &mut Vec<&'a Value>, hops: usize) {
    if hops > 64 || out.len() > 256 {
        return;
    }
    out.push(schema);
    let Some(map) = schema.as_object() else {
        return;
    };
    for keyword in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.get(keyword) {
            for branch in branches {
                collect_in_place(root, branch, out, hops + 1);
            }
        }
    }
    for keyword in ["then", "else"] {
        if let Some(branch) = map.get(keyword) {
            collect_in_place(root, branch, out, hops + 1);
        }
    }
    if let Some(target) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|p| root.pointer(p))
    {
        collect_in_place(root, target, out, hops + 1);
    }
}
