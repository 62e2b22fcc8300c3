//! Schema text checks made at load: every pattern compiles on the linear-time engine,
//! and which members a schema can contain (for agent fields and checks).

use std::collections::HashMap;

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

/// The most characters and classes a pattern may hold once its counted repetitions are
/// expanded (`\w{1,64}` holds 64, `^[a-z0-9._%+-]{1,64}@[a-z0-9.-]{1,255}$` 321,
/// `^(b{1,300}){1,100}$` 30 000). The engine never backtracks, but when a string defeats
/// its lazy DFA it steps through every position for every byte: about 10 ns a position
/// a byte in a release build, so at this bound at most about 40 µs a byte of a string
/// (measured: 30 000 positions on 30 000 bytes took 7.5 s; 5 000 on 5 000, 0.3 s).
pub const MAX_PATTERN_POSITIONS: u64 = 4096;

pub(super) fn compile_pattern(pattern: &str) -> Result<(), SchemaError> {
    compile_regex(pattern)?;
    let positions = regex_syntax::parse(pattern).map_or(0, |hir| positions(&hir));
    if positions > MAX_PATTERN_POSITIONS {
        return Err(SchemaError::PatternTooCostly {
            pattern: pattern.to_owned(),
            positions,
        });
    }
    Ok(())
}

/// The characters and classes of `hir` with every counted repetition expanded (`{n,m}`
/// is `m` copies, `{n,}` `n + 1`), saturating.
fn positions(hir: &regex_syntax::hir::Hir) -> u64 {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => 0,
        HirKind::Literal(literal) => literal.0.len() as u64,
        HirKind::Class(_) => 1,
        HirKind::Repetition(repetition) => {
            let copies = repetition
                .max
                .map_or(u64::from(repetition.min) + 1, u64::from)
                .max(1);
            positions(&repetition.sub).saturating_mul(copies)
        }
        HirKind::Capture(capture) => positions(&capture.sub),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => {
            parts.iter().map(positions).fold(0, u64::saturating_add)
        }
    }
}

fn compile_regex(pattern: &str) -> Result<(), SchemaError> {
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
/// local `$ref`s and the in-place applicators by what each means: every `allOf` branch
/// and a `$ref` apply together, so any of them may close the object; of `anyOf`/`oneOf`
/// one branch is enough, and of `then`/`else` either path: the member is possible when one
/// of them allows it. `false` only where every way through the schema rules it out.
pub(crate) fn can_contain(root: &Value, tokens: &[String]) -> bool {
    Reach {
        root,
        known: HashMap::new(),
    }
    .can_contain(root, tokens, 0)
}

/// One [`can_contain`] question: what each (subschema, remaining tokens) pair answered.
/// A schema reaches the same subschema along many paths (`allOf` branches and a `$ref`
/// beside them, each referring to the next level): answered once each, the walk is
/// linear in the pairs; walked anew it was exponential in the levels (a 4 KB schema
/// held the load for good).
struct Reach<'r> {
    root: &'r Value,
    /// Keyed by the subschema's address and the number of tokens left; a pair being
    /// answered is `true` meanwhile (a cycle stays permissive rather than loop).
    known: HashMap<(*const Value, usize), bool>,
}

impl Reach<'_> {
    fn can_contain(&mut self, schema: &Value, tokens: &[String], hops: usize) -> bool {
        if hops > 64 {
            return true; // a chain this deep: stay permissive
        }
        let key = (std::ptr::from_ref(schema), tokens.len());
        if let Some(known) = self.known.get(&key) {
            return *known;
        }
        self.known.insert(key, true);
        let answer = self.answer(schema, tokens, hops);
        self.known.insert(key, answer);
        answer
    }

    fn answer(&mut self, schema: &Value, tokens: &[String], hops: usize) -> bool {
        let root = self.root;
        let Some((token, rest)) = tokens.split_first() else {
            return schema != &Value::Bool(false);
        };
        let map = match schema {
            Value::Bool(allowed) => return *allowed,
            Value::Object(map) => map,
            _ => return true,
        };
        let target = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| root.pointer(p));
        if !self.own_keywords_allow(schema, map, token, rest, hops) {
            // Beside a `$ref`, draft-07 ignores the other keywords (later drafts apply
            // them): the dialect is not known here, so what the target allows is allowed.
            let ignored = target.is_some_and(|t| self.can_contain(t, tokens, hops + 1));
            if !ignored {
                return false;
            }
        }
        if let Some(Value::Array(branches)) = map.get("allOf") {
            if !branches
                .iter()
                .all(|b| self.can_contain(b, tokens, hops + 1))
            {
                return false;
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(keyword) {
                if !branches.is_empty()
                    && !branches
                        .iter()
                        .any(|b| self.can_contain(b, tokens, hops + 1))
                {
                    return false;
                }
            }
        }
        if map.contains_key("then") || map.contains_key("else") {
            // A missing branch is `true`: that path leaves the member free.
            let mut path = |k: &str| {
                map.get(k)
                    .is_none_or(|b| self.can_contain(b, tokens, hops + 1))
            };
            if !(path("then") || path("else")) {
                return false;
            }
        }
        if let Some(target) = target {
            if !self.can_contain(target, tokens, hops + 1) {
                return false;
            }
        }
        true
    }

    /// Whether the object and array keywords of this one schema (not its branches) allow
    /// a member `token` holding `rest`. A name the schema declares is possible when a
    /// declaring subschema can hold `rest`; an undeclared one where the schema does not
    /// close the object. `unevaluatedProperties: false` sees the names its in-place
    /// branches declare (they evaluate them).
    fn own_keywords_allow(
        &mut self,
        schema: &Value,
        map: &serde_json::Map<String, Value>,
        token: &str,
        rest: &[String],
        hops: usize,
    ) -> bool {
        let root = self.root;
        let mut declared = false;
        let mut subs: Vec<&Value> = Vec::new();
        if let Some(sub) = map.get("properties").and_then(|p| p.get(token)) {
            declared = true;
            subs.push(sub);
        }
        if let Some(Value::Object(patterns)) = map.get("patternProperties") {
            for (pattern, sub) in patterns {
                if regex::Regex::new(pattern).is_ok_and(|r| r.is_match(token)) {
                    declared = true;
                    subs.push(sub);
                }
            }
        }
        for keyword in ["prefixItems", "items"] {
            if let Some(Value::Array(prefix)) = map.get(keyword) {
                if let Some(sub) = token.parse::<usize>().ok().and_then(|i| prefix.get(i)) {
                    declared = true;
                    subs.push(sub);
                }
            }
        }
        if declared {
            return subs
                .into_iter()
                .any(|sub| self.can_contain(sub, rest, hops + 1));
        }
        // Not declared here: the catch-alls decide.
        for keyword in ["items", "additionalItems", "additionalProperties"] {
            match map.get(keyword) {
                Some(Value::Bool(false)) if keyword == "additionalProperties" => return false,
                Some(sub @ Value::Object(_)) if !self.can_contain(sub, rest, hops + 1) => {
                    return false
                }
                _ => {}
            }
        }
        match map.get("unevaluatedProperties") {
            Some(Value::Bool(false)) => {
                // Evaluated by an in-place branch that declares it: that branch decides.
                let mut in_place = Vec::new();
                collect_in_place(root, schema, &mut in_place, hops);
                in_place.iter().skip(1).any(|node| {
                    node.get("properties").and_then(|p| p.get(token)).is_some()
                        || node
                            .get("patternProperties")
                            .and_then(Value::as_object)
                            .is_some_and(|patterns| {
                                patterns
                                    .keys()
                                    .any(|p| regex::Regex::new(p).is_ok_and(|r| r.is_match(token)))
                            })
                })
            }
            Some(sub @ Value::Object(_)) => self.can_contain(sub, rest, hops + 1),
            _ => true,
        }
    }
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
