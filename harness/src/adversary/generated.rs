//! Valid instances generated from the contract's schema itself (proptest strategies from
//! the keywords the contracts use, in any of their dialects), bound to the request and confirmed
//! admitted by the guard: contracts with few fixtures still get deep coverage.

use airlock_guard::{CheckSpec, Contract, Guard, InputKind, Normalise, Request};
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Just, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Nesting of `$ref`s and sub-schemas followed before generation gives up on a branch.
const MAX_DEPTH: usize = 24;

/// Up to `count` distinct valid instances of the contract's schema, each bound to
/// `request` (request id, parameter checks, fresh times) and admitted by the guard.
/// The same seed gives the same instances.
pub fn valid_instances(
    contract: &Contract,
    request: &Request,
    seed: u64,
    count: usize,
) -> Vec<Value> {
    let root = contract.schema().document();
    let strategy = schema_strategy(root, root, 0);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    seed_bytes[8..16]
        .copy_from_slice(&crate::cases::fnv1a(contract.tool().as_bytes()).to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    let guard = Guard::new(contract.clone());
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for _ in 0..count * 30 {
        if out.len() >= count {
            break;
        }
        let Ok(tree) = strategy.new_tree(&mut runner) else {
            continue;
        };
        let mut value = tree.current();
        bind(&mut value, contract, request);
        let text = value.to_string();
        // An MCP tool's instance is its structuredContent: judged inside a response; a
        // vendor contract's or a command's is judged as the source the mapping reads.
        let Some(body) = source(contract, request, &value) else {
            continue;
        };
        if seen.insert(text)
            && guard
                .admit(request, &super::body_bytes(&body))
                .is_admitted()
        {
            out.push(value);
        }
    }
    out
}

/// What the upstream writes for an `instance` of the contract's schema: the instance
/// itself (an envelope), the message around it (an MCP tool's structuredContent), or the
/// source the mapping reads its `data` from, each member put back where its mapping takes
/// it with the normalisation undone (a vendor document; a command's output, as a JSON
/// string of its text). `None` when the instance has no `data` (a failure envelope) or a
/// member no mapping fills, or a normalisation cannot be undone.
pub fn source(contract: &Contract, request: &Request, instance: &Value) -> Option<Value> {
    let map = match contract.input() {
        InputKind::Envelope => return Some(instance.clone()),
        InputKind::Mcp(_) => return Some(super::mcp::response(request, instance)),
        InputKind::Vendor(vendor) => &vendor.map,
        InputKind::Lines(lines) => &lines.map,
        _ => return None,
    };
    let data = instance.get("data")?.as_object()?;
    let mut doc = Value::Object(Map::new());
    let mut pairs: Vec<(String, String)> = Vec::new();
    if let InputKind::Lines(lines) = contract.input() {
        if lines.map.is_empty() {
            for key in &lines.keys {
                pairs.push((key.clone(), data.get(key)?.as_str()?.to_owned()));
            }
            return Some(Value::String(super::lines::write(lines, &pairs)));
        }
    }
    for name in data.keys() {
        if !map.iter().any(|m| &m.field == name) {
            return None;
        }
    }
    for mapping in map {
        let Some(value) = data.get(&mapping.field) else {
            if mapping.optional {
                continue;
            }
            return None;
        };
        let raw = unnormalise(&mapping.normalise, value)?;
        match contract.input() {
            InputKind::Lines(_) => {
                let key = mapping.from.tokens().first()?.clone();
                pairs.push((key, raw.as_str()?.to_owned()));
            }
            _ => {
                let mut at = &mut doc;
                let tokens = mapping.from.tokens();
                let (last, parents) = tokens.split_last()?;
                for token in parents {
                    at = at
                        .as_object_mut()?
                        .entry(token.clone())
                        .or_insert_with(|| Value::Object(Map::new()));
                }
                at.as_object_mut()?.insert(last.clone(), raw);
            }
        }
    }
    match contract.input() {
        InputKind::Lines(lines) => {
            // In the grammar's declared order.
            pairs.sort_by_key(|(k, _)| lines.keys.iter().position(|d| d == k));
            Some(Value::String(super::lines::write(lines, &pairs)))
        }
        _ => Some(doc),
    }
}

/// The source value that `how` turns into `value`.
fn unnormalise(how: &Normalise, value: &Value) -> Option<Value> {
    Some(match how {
        Normalise::IntegerFromString => Value::String(value.as_i64()?.to_string()),
        Normalise::Table(table) => Value::String(
            table
                .iter()
                .find(|(_, v)| *v == value)
                .map(|(k, _)| k.clone())?,
        ),
        Normalise::Rfc3339FromEpochSeconds => Value::from(
            value
                .as_str()?
                .parse::<airlock_guard::jiff::Timestamp>()
                .ok()?
                .as_second(),
        ),
        _ => value.clone(),
    })
}

/// Make an instance answer `request`: its id, the values parameter checks compare with,
/// and `now` for fresh times.
fn bind(value: &mut Value, contract: &Contract, request: &Request) {
    if let Some(Value::Object(map)) = Some(&mut *value).filter(|_| contract.input().mcp().is_none())
    {
        if map.contains_key("request_id") {
            map.insert(
                "request_id".into(),
                Value::String(request.request_id.clone()),
            );
        }
    }
    for check in contract.checks() {
        let replacement = match check {
            CheckSpec::EqualsParam { param, .. } => request.params.get(param).cloned(),
            CheckSpec::InParam { param, .. } => request
                .params
                .get(param)
                .and_then(|v| v.as_array()?.first().cloned()),
            CheckSpec::Fresh { .. } => Some(Value::String(request.now.to_string())),
            _ => None,
        };
        let Some(replacement) = replacement else {
            continue;
        };
        if let Some(slot) = check
            .field()
            .tokens()
            .iter()
            .try_fold(&mut *value, |at, token| at.get_mut(token.as_str()))
        {
            *slot = replacement;
        }
    }
}

fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    root.pointer(reference.strip_prefix('#')?)
}

/// One object schema from `allOf` branches and their parent: properties and required
/// merged, the other keywords taken from the first that has them.
fn merge_all(root: &Value, parent: &Map<String, Value>, branches: &[Value]) -> Value {
    let mut merged = parent.clone();
    merged.remove("allOf");
    let mut properties = merged
        .remove("properties")
        .and_then(|p| p.as_object().cloned())
        .unwrap_or_default();
    let mut required: Vec<Value> = merged
        .remove("required")
        .and_then(|r| r.as_array().cloned())
        .unwrap_or_default();
    for branch in branches {
        let branch = match branch
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve(root, r))
        {
            Some(target) => target,
            None => branch,
        };
        let Some(map) = branch.as_object() else {
            continue;
        };
        for (k, v) in map {
            match k.as_str() {
                "properties" => properties.extend(v.as_object().cloned().unwrap_or_default()),
                "required" => required.extend(v.as_array().cloned().unwrap_or_default()),
                _ => {
                    merged.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
    }
    merged.insert("properties".into(), Value::Object(properties));
    merged.insert("required".into(), Value::Array(required));
    Value::Object(merged)
}

fn schema_strategy(root: &Value, schema: &Value, depth: usize) -> BoxedStrategy<Value> {
    let Some(map) = schema.as_object() else {
        return Just(Value::Null).boxed();
    };
    if depth > MAX_DEPTH {
        return Just(Value::Null).boxed();
    }
    if let Some(target) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
    {
        return schema_strategy(root, target, depth + 1);
    }
    if let Some(constant) = map.get("const") {
        return Just(constant.clone()).boxed();
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        if !values.is_empty() {
            return proptest::sample::select(values.clone()).boxed();
        }
    }
    if let Some(Value::Array(branches)) = map.get("allOf") {
        return schema_strategy(root, &merge_all(root, map, branches), depth + 1);
    }
    for keyword in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = map.get(keyword) {
            let options: Vec<BoxedStrategy<Value>> = branches
                .iter()
                .map(|b| schema_strategy(root, b, depth + 1))
                .collect();
            if !options.is_empty() {
                return proptest::strategy::Union::new(options).boxed();
            }
        }
    }
    let kind = match map.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types.first().and_then(Value::as_str).unwrap_or("null"),
        _ if map.contains_key("properties") => "object",
        _ => "null",
    };
    let number = |key: &str| map.get(key).and_then(Value::as_f64);
    match kind {
        "object" => object_strategy(root, map, depth),
        "string" => string_strategy(map),
        "integer" => {
            let low = number("minimum").unwrap_or(0.0) as i64;
            let high = number("maximum").map_or(low.saturating_add(1000), |m| m as i64);
            (low..=high.max(low)).prop_map(Value::from).boxed()
        }
        "number" => {
            let low = number("minimum").unwrap_or(0.0);
            let high = number("maximum").unwrap_or(low + 1000.0).max(low);
            (low..=high).prop_map(Value::from).boxed()
        }
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "array" => {
            // A tuple (`prefixItems`, or a draft-07/2019-09 `items` array): exactly its
            // items; the guard decides whether that is enough.
            if let Some(tuple) = ["prefixItems", "items"]
                .into_iter()
                .find_map(|k| map.get(k).and_then(Value::as_array))
            {
                let items: Vec<BoxedStrategy<Value>> = tuple
                    .iter()
                    .map(|i| schema_strategy(root, i, depth + 1))
                    .collect();
                return items.prop_map(Value::Array).boxed();
            }
            let items = map.get("items").map_or_else(
                || Just(Value::Null).boxed(),
                |i| schema_strategy(root, i, depth + 1),
            );
            let low = number("minItems").unwrap_or(0.0) as usize;
            let high = number("maxItems")
                .map_or(low + 3, |m| (m as usize).min(low + 3))
                .max(low);
            proptest::collection::vec(items, low..=high)
                .prop_map(Value::Array)
                .boxed()
        }
        _ => Just(Value::Null).boxed(),
    }
}

fn object_strategy(root: &Value, map: &Map<String, Value>, depth: usize) -> BoxedStrategy<Value> {
    let required: BTreeSet<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = map
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut members: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    for (name, schema) in &properties {
        let name = name.clone();
        let value = schema_strategy(root, schema, depth + 1);
        if required.contains(name.as_str()) {
            members.push(value.prop_map(move |v| Some((name.clone(), v))).boxed());
        } else {
            members.push(
                proptest::option::of(value)
                    .prop_map(move |v| v.map(|v| (name.clone(), v)))
                    .boxed(),
            );
        }
    }
    members
        .prop_map(|members| Value::Object(members.into_iter().flatten().collect()))
        .boxed()
}

fn string_strategy(map: &Map<String, Value>) -> BoxedStrategy<Value> {
    if map.get("format").and_then(Value::as_str) == Some("date-time") {
        return date_time().prop_map(Value::String).boxed();
    }
    let min = map.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = map
        .get("maxLength")
        .and_then(Value::as_u64)
        .map_or(min + 24, |m| (m as usize).min(min + 24))
        .max(min);
    if let Some(pattern) = map.get("pattern").and_then(Value::as_str) {
        // Generation needs the pattern without its anchors; a full match satisfies it.
        let inner = pattern.strip_prefix('^').unwrap_or(pattern);
        let inner = inner.strip_suffix('$').unwrap_or(inner);
        if let Ok(strategy) = proptest::string::string_regex(inner) {
            return strategy.prop_map(Value::String).boxed();
        }
    }
    proptest::string::string_regex(&format!("[A-Za-z0-9 ._-]{{{min},{max}}}")).map_or_else(
        |_| Just(Value::String("x".repeat(min))).boxed(),
        |s| s.prop_map(Value::String).boxed(),
    )
}

fn date_time() -> impl Strategy<Value = String> {
    (
        2000..2031u32,
        1..=12u32,
        1..=28u32,
        0..24u32,
        0..60u32,
        0..60u32,
        prop_oneof![
            Just("Z".to_owned()),
            (0..14u32, any::<bool>())
                .prop_map(|(h, neg)| format!("{}{h:02}:00", if neg { '-' } else { '+' }))
        ],
    )
        .prop_map(|(y, mo, d, h, mi, s, off)| {
            format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{off}")
        })
}
