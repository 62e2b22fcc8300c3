//! The work one value can cost: the subschemas applied *in place* to a single instance
//! value (`allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`, local
//! `$ref`s), counted with every reference expanded. A 2 KB schema of N levels of
//! `{"allOf": [{"$ref": next}, {"$ref": next}]}` applies 2^N of them to every value, and
//! the validator evaluates each: refused at load, so no contract can make one answer cost
//! exponential time. Counted in one pass over the document, each subschema once
//! (memoised); member and item keywords apply to other values and are not added up.

use serde_json::Value;
use std::collections::HashMap;

use crate::pointer::Pointer;

/// The most subschemas one schema may apply in place to one value. A hand-written or
/// generated schema applies a few hundred at most (every branch of a large `oneOf`, each
/// with its references); 2^17 is past anything but a blow-up.
pub const MAX_IN_PLACE: u64 = 1 << 17;

/// Keywords whose value is a list of subschemas applied to the same value.
const IN_PLACE_LISTS: [&str; 3] = ["allOf", "anyOf", "oneOf"];
/// Keywords whose value is one subschema applied to the same value.
const IN_PLACE_ONE: [&str; 4] = ["not", "if", "then", "else"];

/// The location and count of the first subschema that applies more than
/// [`MAX_IN_PLACE`] subschemas to one value, if any.
pub(crate) fn over_budget(document: &Value) -> Option<(String, u64)> {
    let mut costs = Costs {
        root: document,
        memo: HashMap::new(),
        visiting: Vec::new(),
    };
    let mut todo = vec![(document, String::new())];
    while let Some((schema, at)) = todo.pop() {
        let cost = costs.cost(schema, &at);
        if cost > MAX_IN_PLACE {
            return Some((
                if at.is_empty() {
                    "#".into()
                } else {
                    format!("#{at}")
                },
                cost,
            ));
        }
        // Every subschema of the document is some value's schema: visit them all.
        match schema {
            Value::Object(map) => {
                for (key, child) in map {
                    if matches!(key.as_str(), "enum" | "const" | "examples" | "default") {
                        continue;
                    }
                    if child.is_object() || child.is_array() {
                        todo.push((child, format!("{at}/{}", Pointer::escape_token(key))));
                    }
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    if child.is_object() || child.is_array() {
                        todo.push((child, format!("{at}/{i}")));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

struct Costs<'a> {
    root: &'a Value,
    memo: HashMap<String, u64>,
    visiting: Vec<String>,
}

impl<'a> Costs<'a> {
    /// Subschemas applied in place to one value by `schema` (at pointer `at`), itself
    /// included, saturating.
    fn cost(&mut self, schema: &'a Value, at: &str) -> u64 {
        let Value::Object(map) = schema else {
            return 1;
        };
        if let Some(&known) = self.memo.get(at) {
            return known;
        }
        if self.visiting.iter().any(|v| v == at) {
            // An in-place cycle (refused elsewhere) or recursion: counted once.
            return 1;
        }
        self.visiting.push(at.to_owned());
        let mut total: u64 = 1;
        for keyword in IN_PLACE_LISTS {
            if let Some(Value::Array(branches)) = map.get(keyword) {
                for (i, branch) in branches.iter().enumerate() {
                    let c = self.cost(branch, &format!("{at}/{keyword}/{i}"));
                    total = total.saturating_add(c);
                }
            }
        }
        for keyword in IN_PLACE_ONE {
            if let Some(branch) = map.get(keyword) {
                let c = self.cost(branch, &format!("{at}/{keyword}"));
                total = total.saturating_add(c);
            }
        }
        if let Some(Value::Object(dependents)) = map.get("dependentSchemas") {
            for (name, branch) in dependents {
                let c = self.cost(
                    branch,
                    &format!("{at}/dependentSchemas/{}", Pointer::escape_token(name)),
                );
                total = total.saturating_add(c);
            }
        }
        if let Some(pointer) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
        {
            if let Some(target) = self.root.pointer(pointer) {
                let c = self.cost(target, pointer);
                total = total.saturating_add(c);
            }
        }
        self.visiting.pop();
        self.memo.insert(at.to_owned(), total);
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// N levels of `allOf: [$ref next, $ref next]` (the attack: 2^N per value).
    fn doubling(levels: usize) -> Value {
        let mut defs = serde_json::Map::new();
        for i in 0..levels {
            let next = format!("#/$defs/d{}", i + 1);
            defs.insert(
                format!("d{i}"),
                json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert(format!("d{levels}"), json!({"type": "object"}));
        json!({"$ref": "#/$defs/d0", "$defs": defs})
    }

    #[test]
    fn an_exponential_fan_out_is_over_budget_and_a_wide_schema_is_not() {
        let (at, cost) = over_budget(&doubling(30)).unwrap();
        assert!(cost > MAX_IN_PLACE, "{at} {cost}");
        assert!(over_budget(&doubling(10)).is_none());
        // Wide but linear: 2 000 branches, each with a reference.
        let branches: Vec<Value> = (0..2000).map(|_| json!({"$ref": "#/$defs/x"})).collect();
        let wide = json!({"anyOf": branches, "$defs": {"x": {"type": "string"}}});
        assert!(over_budget(&wide).is_none());
        // A recursive schema (a tree) is not in place: fine.
        let tree = json!({"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}});
        assert!(over_budget(&tree).is_none());
    }
}
