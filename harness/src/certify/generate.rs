//! Candidate instances built from a schema's keywords — a difference schema the algebra
//! emitted, a version's own schema, a branch — deterministic and bounded (depth, values per
//! node, nodes per run). Nothing here is trusted: a candidate becomes a witness only once
//! the guard's compiled schemas of both versions have judged it.

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{json, Map, Value};
use std::collections::{BTreeSet, HashSet};

use super::values::unique;

/// Values kept per schema node.
const PER_NODE: usize = 10;
/// Nesting followed (`$ref`s, members, items) before a branch gives up.
const MAX_DEPTH: usize = 14;
/// Schema nodes visited in one run: a wide recursive schema stops here, not at the stack.
const MAX_NODES: usize = 4_000;
/// Strings drawn from each `pattern`.
const PATTERN_SAMPLES: usize = 8;
/// Lengths past which a string or array is not built.
const MAX_LENGTH: u64 = 4096;

/// Up to about `PER_NODE` candidate instances of `schema`, whose local `$ref`s resolve in
/// `root`: its `examples`/`default`/`const`/`enum` values first, then values built from its
/// keywords (every `anyOf`/`oneOf` branch, `if`/`then` and `else`, limits at their edges,
/// strings drawn from each `pattern`). The same inputs give the same candidates.
pub(crate) fn candidates(root: &Value, schema: &Value, seed: u64) -> Vec<Value> {
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut generator = Generator {
        root,
        runner: TestRunner::new_with_rng(
            Config::default(),
            TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
        ),
        nodes: 0,
    };
    generator.values(schema, 0)
}

/// Every `examples` member and `default` value anywhere in `document` at the location of
/// the whole instance (the root and what it applies in place), for two-file mode without
/// fixtures.
pub(crate) fn examples(document: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for schema in crate::schema::schema_at(document, "") {
        if let Some(Value::Array(items)) = schema.get("examples") {
            out.extend(items.iter().cloned());
        }
        out.extend(schema.get("default").cloned());
    }
    out
}

struct Generator<'a> {
    root: &'a Value,
    runner: TestRunner,
    nodes: usize,
}

/// Values a node's list holds at most.
const KEPT: usize = PER_NODE * 4;

fn push_unique(out: &mut Vec<Value>, value: Value) {
    if out.len() < KEPT && !out.contains(&value) {
        out.push(value);
    }
}

/// `a` and `b` as one schema: members and requirements joined, types intersected, the
/// tighter limit kept, other keywords from `a` first (a candidate is checked afterwards).
fn merge(a: &Map<String, Value>, b: &Value) -> Map<String, Value> {
    let mut out = a.clone();
    let Some(b) = b.as_object() else {
        if b == &Value::Bool(false) {
            out.insert("not".into(), json!({}));
        }
        return out;
    };
    for (key, value) in b {
        match (key.as_str(), out.get(key)) {
            (_, None) => {
                out.insert(key.clone(), value.clone());
            }
            ("properties", Some(Value::Object(mine))) => {
                let mut joined = mine.clone();
                for (name, schema) in value.as_object().into_iter().flatten() {
                    let both = match joined.get(name) {
                        Some(Value::Object(first)) => Value::Object(merge(first, schema)),
                        _ => schema.clone(),
                    };
                    joined.insert(name.clone(), both);
                }
                out.insert(key.clone(), Value::Object(joined));
            }
            ("required", Some(Value::Array(mine))) => {
                let joined = mine.iter().chain(value.as_array().into_iter().flatten());
                out.insert(key.clone(), Value::Array(unique(joined.cloned())));
            }
            ("type", Some(mine)) => {
                let set = |v: &Value| -> BTreeSet<String> {
                    match v {
                        Value::String(t) => [t.clone()].into(),
                        Value::Array(ts) => ts
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect(),
                        _ => BTreeSet::new(),
                    }
                };
                let (x, y) = (set(mine), set(value));
                let mut both: Vec<Value> = x
                    .iter()
                    .filter(|t| y.contains(*t) || (t.as_str() == "integer" && y.contains("number")))
                    .map(|t| Value::String(t.clone()))
                    .collect();
                if x.contains("number") && y.contains("integer") && !x.contains("integer") {
                    both.push("integer".into());
                }
                out.insert(key.clone(), Value::Array(both));
            }
            (
                "minimum" | "minLength" | "minItems" | "minProperties" | "exclusiveMinimum",
                Some(mine),
            ) if value.as_f64() > mine.as_f64() => {
                out.insert(key.clone(), value.clone());
            }
            (
                "maximum" | "maxLength" | "maxItems" | "maxProperties" | "exclusiveMaximum",
                Some(mine),
            ) if value.as_f64() < mine.as_f64() => {
                out.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    out
}

impl Generator<'_> {
    fn resolve(&self, reference: &str) -> Option<&Value> {
        let pointer = reference.strip_prefix('#')?;
        let pointer = pointer.replace("%25", "%");
        self.root.pointer(&pointer)
    }

    fn values(&mut self, schema: &Value, depth: usize) -> Vec<Value> {
        self.nodes += 1;
        if depth > MAX_DEPTH || self.nodes > MAX_NODES {
            return Vec::new();
        }
        let map = match schema {
            Value::Bool(true) => return vec![Value::Null, json!("x"), json!(0), json!({})],
            Value::Object(map) => map,
            _ => return Vec::new(),
        };
        let mut out = Vec::new();
        if literal_values(map, &mut out) || self.composed(map, depth, &mut out) {
            return out;
        }
        let types = types_of(map);
        let per_type: Vec<Vec<Value>> = types.iter().map(|t| self.typed(map, t, depth)).collect();
        interleave(&mut out, per_type);
        out
    }

    /// The values of an applicator (`$ref`, `allOf` merged into the schema; `anyOf`,
    /// `oneOf` and `if` branch by branch, interleaved); whether one applied.
    fn composed(&mut self, map: &Map<String, Value>, depth: usize, out: &mut Vec<Value>) -> bool {
        let without = |key: &str| {
            let mut rest = map.clone();
            rest.remove(key);
            rest
        };
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
            .cloned()
        {
            let merged = merge(&without("$ref"), &target);
            out.extend(self.values(&Value::Object(merged), depth + 1));
            return true;
        }
        if let Some(Value::Array(branches)) = map.get("allOf").cloned() {
            let mut merged = without("allOf");
            for branch in &branches {
                let branch = match branch
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| self.resolve(r))
                {
                    Some(target) => target.clone(),
                    None => branch.clone(),
                };
                merged = merge(&merged, &branch);
            }
            out.extend(self.values(&Value::Object(merged), depth + 1));
            return true;
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(keyword).cloned() {
                let rest = without(keyword);
                let per_branch: Vec<Vec<Value>> = branches
                    .iter()
                    .map(|b| self.values(&Value::Object(merge(&rest, b)), depth + 1))
                    .collect();
                interleave(out, per_branch);
                return true;
            }
        }
        if let Some(condition) = map.get("if").cloned() {
            let mut rest = without("if");
            let then = rest.remove("then").unwrap_or(Value::Bool(true));
            let otherwise = rest.remove("else").unwrap_or(Value::Bool(true));
            let yes = merge(&merge(&rest, &condition), &then);
            let no = merge(&rest, &otherwise);
            let both = vec![
                self.values(&Value::Object(yes), depth + 1),
                self.values(&Value::Object(no), depth + 1),
            ];
            interleave(out, both);
            return true;
        }
        false
    }

    fn typed(&mut self, map: &Map<String, Value>, kind: &str, depth: usize) -> Vec<Value> {
        match kind {
            "null" => vec![Value::Null],
            "boolean" => vec![json!(true), json!(false)],
            "integer" => numbers(map, true),
            "number" => numbers(map, false),
            "string" => self.strings(map),
            "array" => self.arrays(map, depth),
            "object" => self.objects(map, depth),
            _ => Vec::new(),
        }
    }

    fn strings(&mut self, map: &Map<String, Value>) -> Vec<Value> {
        let min = map.get("minLength").and_then(Value::as_u64).unwrap_or(0);
        let max = map.get("maxLength").and_then(Value::as_u64);
        let fits = |s: &str| {
            let n = s.chars().count() as u64;
            n >= min && max.is_none_or(|m| n <= m)
        };
        let mut out = Vec::new();
        if let Some(format) = map.get("format").and_then(Value::as_str) {
            let sample = match format {
                "date-time" => "2024-01-02T03:04:05Z",
                "date" => "2024-01-02",
                "time" => "03:04:05Z",
                "duration" => "P1D",
                "email" | "idn-email" => "someone@example.com",
                "hostname" | "idn-hostname" => "example.com",
                "ipv4" => "192.0.2.1",
                "ipv6" => "2001:db8::1",
                "uri" | "iri" => "https://example.com/x",
                "uri-reference" | "iri-reference" => "/x",
                "uri-template" => "https://example.com/{x}",
                "uuid" => "123e4567-e89b-12d3-a456-426614174000",
                "json-pointer" => "/x",
                "relative-json-pointer" => "0/x",
                "regex" => "^x$",
                _ => "x",
            };
            out.push(Value::String(sample.to_owned()));
        }
        if let Some(pattern) = map.get("pattern").and_then(Value::as_str) {
            out.extend(self.pattern_strings(pattern, fits));
        }
        // Strings the `not` of a difference excludes are found among these.
        for edge in [
            Some(min),
            max,
            Some(min + 1),
            max.map(|m| m.saturating_sub(1)),
        ]
        .into_iter()
        .flatten()
        .filter(|n| *n <= MAX_LENGTH)
        {
            push_unique(&mut out, Value::String("x".repeat(edge as usize)));
        }
        for text in ["abc", "", "0", "x y"] {
            if fits(text) {
                push_unique(&mut out, Value::String(text.to_owned()));
            }
        }
        out
    }

    /// Strings drawn from a pattern without its anchors (an unanchored pattern matches
    /// wherever the drawn text sits), those of the right length first.
    fn pattern_strings(&mut self, pattern: &str, fits: impl Fn(&str) -> bool) -> Vec<Value> {
        let inner = pattern.strip_prefix('^').unwrap_or(pattern);
        let inner = inner.strip_suffix('$').unwrap_or(inner);
        let Ok(strategy) = proptest::string::string_regex(inner) else {
            return Vec::new();
        };
        let (mut good, mut other) = (Vec::new(), Vec::new());
        for _ in 0..PATTERN_SAMPLES {
            let Ok(tree) = strategy.new_tree(&mut self.runner) else {
                continue;
            };
            let text = tree.current();
            if fits(&text) {
                push_unique(&mut good, Value::String(text));
            } else {
                push_unique(&mut other, Value::String(text));
            }
        }
        good.extend(other);
        good
    }

    fn arrays(&mut self, map: &Map<String, Value>, depth: usize) -> Vec<Value> {
        let min = map.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        let max = map
            .get("maxItems")
            .and_then(Value::as_u64)
            .unwrap_or(u64::MAX);
        if min > MAX_LENGTH || min > max {
            return Vec::new();
        }
        let tuple = ["prefixItems", "items"]
            .into_iter()
            .find_map(|k| map.get(k).and_then(Value::as_array))
            .cloned()
            .unwrap_or_default();
        let rest = match map.get("items") {
            Some(items) if items.is_object() || items.is_boolean() => items.clone(),
            _ => map
                .get("additionalItems")
                .cloned()
                .unwrap_or(Value::Bool(true)),
        };
        let mut prefix = Vec::new();
        for item in &tuple {
            let values = self.values(item, depth + 1);
            let Some(first) = values.into_iter().next() else {
                return Vec::new();
            };
            prefix.push(first);
        }
        let items = self.values(&rest, depth + 1);
        let contains = map
            .get("contains")
            .map(|c| self.values(c, depth + 1))
            .unwrap_or_default();
        let unique = map.get("uniqueItems") == Some(&Value::Bool(true));
        let mut out = Vec::new();
        let fill = |head: &[Value], pool: &[Value], length: u64| -> Option<Value> {
            let mut array = head.to_vec();
            let mut i = 0;
            while (array.len() as u64) < length {
                let v = pool
                    .get(if unique { i } else { i % pool.len().max(1) })?
                    .clone();
                array.push(v);
                i += 1;
            }
            Some(Value::Array(array))
        };
        let length = min.max(prefix.len() as u64);
        if let Some(v) = fill(&prefix, &items, length) {
            push_unique(&mut out, v);
        }
        for item in items.iter().chain(&contains).take(PER_NODE) {
            let mut head = prefix.clone();
            head.push(item.clone());
            if let Some(v) = fill(&head, &items, length.max(head.len() as u64)) {
                if (head.len() as u64) <= max {
                    push_unique(&mut out, v);
                }
            }
        }
        out
    }

    fn objects(&mut self, map: &Map<String, Value>, depth: usize) -> Vec<Value> {
        let properties = map
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let names_allowed = names_allowed(map);
        let closed = map.get("additionalProperties") == Some(&Value::Bool(false))
            || map.get("unevaluatedProperties") == Some(&Value::Bool(false));
        let allowed = |name: &str| {
            names_allowed
                .as_ref()
                .is_none_or(|n| n.iter().any(|a| a == name))
        };
        let required: Vec<String> = map
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        let mut base = Map::new();
        let mut choices: Vec<(String, Vec<Value>)> = Vec::new();
        for name in &required {
            let values = self.values(&member_schema(map, &properties, name), depth + 1);
            let Some(first) = values.first() else {
                return Vec::new();
            };
            base.insert(name.clone(), first.clone());
            choices.push((name.clone(), values));
        }
        let required_names: HashSet<&String> = required.iter().collect();
        let optional: Vec<String> = properties
            .keys()
            .filter(|n| !required_names.contains(n) && allowed(n))
            .cloned()
            .collect();
        let mut optional_values = Vec::new();
        for name in optional.iter().take(PER_NODE * 2) {
            let values = self.values(&properties[name], depth + 1);
            if let Some(first) = values.first() {
                optional_values.push((name.clone(), first.clone(), values));
            }
        }
        let min = map
            .get("minProperties")
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        let mut out = Vec::new();
        let padded = padded_to_min(&base, &optional_values, min, closed, &allowed);
        push_unique(&mut out, Value::Object(padded.clone()));
        // One member at a time: every other value of a required member, each optional
        // member added, then all of them.
        one_member_at_a_time(&padded, &choices, &optional_values, &mut out);
        self.pattern_members(map, &properties, &allowed, (&padded, depth), &mut out);
        let mut all = padded;
        for (name, first, _) in &optional_values {
            all.insert(name.clone(), first.clone());
        }
        push_unique(&mut out, Value::Object(all));
        if !closed && names_allowed.is_none() {
            let mut o = base;
            o.insert("airlock_extra".into(), json!("x"));
            push_unique(&mut out, Value::Object(o));
        }
        out
    }

    /// A member named after each pattern of `patternProperties` (a name the pattern
    /// matches, no listed member's), with a value of its subschema.
    fn pattern_members(
        &mut self,
        map: &Map<String, Value>,
        properties: &Map<String, Value>,
        allowed: &dyn Fn(&str) -> bool,
        (padded, depth): (&Map<String, Value>, usize),
        out: &mut Vec<Value>,
    ) {
        let patterns: Vec<(String, Value)> = map
            .get("patternProperties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .take(PER_NODE)
            .map(|(p, s)| (p.clone(), s.clone()))
            .collect();
        for (pattern, schema) in patterns {
            let name = self
                .pattern_strings(&pattern, |_| true)
                .into_iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .find(|n| !properties.contains_key(n) && allowed(n));
            let value = self.values(&schema, depth + 1).into_iter().next();
            if let (Some(name), Some(value)) = (name, value) {
                let mut o = padded.clone();
                o.insert(name, value);
                push_unique(out, Value::Object(o));
            }
        }
    }
}

/// The schema's own values (`examples`, `default`), then `const` or `enum`; whether
/// those are all its values.
fn literal_values(map: &Map<String, Value>, out: &mut Vec<Value>) -> bool {
    if let Some(Value::Array(items)) = map.get("examples") {
        items.iter().for_each(|v| push_unique(out, v.clone()));
    }
    if let Some(v) = map.get("default") {
        push_unique(out, v.clone());
    }
    if let Some(v) = map.get("const") {
        push_unique(out, v.clone());
        return true;
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        values.iter().for_each(|v| push_unique(out, v.clone()));
        return true;
    }
    false
}

/// The types a schema's values are generated for: its `type`, else the type its
/// keywords apply to, else every type.
fn types_of(map: &Map<String, Value>) -> Vec<String> {
    match map.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => {
            let has = |keys: &[&str]| keys.iter().any(|k| map.contains_key(*k));
            if has(&[
                "properties",
                "required",
                "additionalProperties",
                "propertyNames",
                "patternProperties",
                "minProperties",
            ]) {
                vec!["object".into()]
            } else if has(&["items", "prefixItems", "contains", "minItems"]) {
                vec!["array".into()]
            } else if has(&["pattern", "minLength", "maxLength", "format"]) {
                vec!["string".into()]
            } else if has(&[
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum",
                "multipleOf",
            ]) {
                vec!["number".into()]
            } else {
                ["null", "boolean", "integer", "string", "array", "object"]
                    .map(str::to_owned)
                    .to_vec()
            }
        }
    }
}

/// The member names `propertyNames` allows (its `enum` or `const`); `None`: any.
fn names_allowed(map: &Map<String, Value>) -> Option<Vec<String>> {
    map.get("propertyNames")
        .and_then(|p| match (p.get("enum"), p.get("const")) {
            (Some(Value::Array(names)), _) => Some(
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
            ),
            (_, Some(Value::String(name))) => Some(vec![name.clone()]),
            _ => None,
        })
}

/// The subschema of member `name`: its property's, else the first matching
/// `patternProperties`', else `additionalProperties` (default `true`).
fn member_schema(map: &Map<String, Value>, properties: &Map<String, Value>, name: &str) -> Value {
    if let Some(s) = properties.get(name) {
        return s.clone();
    }
    for (pattern, s) in map
        .get("patternProperties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if regex::Regex::new(pattern).is_ok_and(|r| r.is_match(name)) {
            return s.clone();
        }
    }
    map.get("additionalProperties")
        .cloned()
        .unwrap_or(Value::Bool(true))
}

/// An optional member with its first value and its values.
type OptionalMember = (String, Value, Vec<Value>);

/// `base` padded to `minProperties`: optional members first, then (when the object is
/// open) `extra_N` members the names allow.
fn padded_to_min(
    base: &Map<String, Value>,
    optional_values: &[OptionalMember],
    min: usize,
    closed: bool,
    allowed: &dyn Fn(&str) -> bool,
) -> Map<String, Value> {
    let mut padded = base.clone();
    for (name, first, _) in optional_values {
        if padded.len() >= min {
            break;
        }
        padded.insert(name.clone(), first.clone());
    }
    let mut extra = 0;
    while padded.len() < min && !closed && extra < 64 {
        let name = format!("extra_{extra}");
        if allowed(&name) {
            padded.insert(name, Value::Null);
        }
        extra += 1;
    }
    padded
}

/// One member at a time: every other value of a required member, each optional
/// member's first values (a wide object is copied per value only while the list has
/// room).
fn one_member_at_a_time(
    padded: &Map<String, Value>,
    choices: &[(String, Vec<Value>)],
    optional_values: &[OptionalMember],
    out: &mut Vec<Value>,
) {
    for (name, values) in choices {
        for v in values.iter().skip(1) {
            if out.len() >= KEPT {
                break;
            }
            let mut o = padded.clone();
            o.insert(name.clone(), v.clone());
            push_unique(out, Value::Object(o));
        }
    }
    for (name, _, values) in optional_values {
        for v in values.iter().take(3) {
            if out.len() >= KEPT {
                break;
            }
            let mut o = padded.clone();
            o.insert(name.clone(), v.clone());
            push_unique(out, Value::Object(o));
        }
    }
}

/// Round-robin: every source is represented before any gives a second value.
fn interleave(out: &mut Vec<Value>, sources: Vec<Vec<Value>>) {
    let longest = sources.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..longest {
        for source in &sources {
            if let Some(v) = source.get(i) {
                push_unique(out, v.clone());
            }
        }
    }
}

/// Numbers at and around the limits (and a multiple of `multipleOf` inside them).
fn numbers(map: &Map<String, Value>, integer: bool) -> Vec<Value> {
    let get = |k: &str| map.get(k).and_then(Value::as_f64);
    let step = if integer { 1.0 } else { 0.5 };
    let low = get("minimum").or_else(|| get("exclusiveMinimum").map(|m| m + step));
    let high = get("maximum").or_else(|| get("exclusiveMaximum").map(|m| m - step));
    let mut raw: Vec<f64> = Vec::new();
    raw.extend(low);
    raw.extend(high);
    if let (Some(l), Some(h)) = (low, high) {
        raw.push(((l + h) / 2.0).floor());
    }
    raw.extend([0.0, 1.0, -1.0, 7.0, 1000.0]);
    if !integer {
        raw.extend([0.5, -2.5]);
    }
    if let Some(m) = get("multipleOf").filter(|m| *m > 0.0) {
        let start = low.unwrap_or(0.0);
        raw.push((start / m).ceil() * m);
    }
    let mut out = Vec::new();
    for v in raw {
        let inside = low.is_none_or(|l| v >= l) && high.is_none_or(|h| v <= h);
        if !v.is_finite() || !inside {
            continue;
        }
        let value = if (integer || v.fract() == 0.0) && v.abs() < 9.0e15 {
            json!(v as i64)
        } else {
            json!(v)
        };
        push_unique(&mut out, value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_branch_of_a_composition_is_represented() {
        let schema =
            json!({"anyOf": [{"type": "string", "pattern": "^CR-[0-9]{6}$"}, {"type": "null"}]});
        let values = candidates(&schema, &schema, 1);
        assert!(values.contains(&Value::Null), "{values:?}");
        assert!(
            values
                .iter()
                .filter_map(Value::as_str)
                .any(|s| s.len() == 9 && s.starts_with("CR-")),
            "{values:?}"
        );
    }

    #[test]
    fn references_and_required_members_build_objects() {
        let root = json!({"$defs": {"n": {"type": "integer", "minimum": 3}},
            "type": "object", "required": ["a"], "additionalProperties": false,
            "properties": {"a": {"$ref": "#/$defs/n"}, "b": {"type": "boolean"}}});
        let values = candidates(&root, &root, 1);
        assert_eq!(values[0], json!({"a": 3}));
        assert!(values.contains(&json!({"a": 3, "b": true})), "{values:?}");
    }
}
