//! The adversary: cases derived from a contract's fixtures. Every fixture as it is; from
//! every accepted fixture the deterministic variants (extra, missing, swapped and
//! duplicated members, size and depth past the limits, request-id and binding
//! mismatches, transport errors); then seeded random mutation chains.

use airlock_guard::{CheckSpec, Contract, Request, TransportError};
use serde_json::{json, Value};
use std::collections::BTreeSet;

use crate::cases::{
    canary, escape_token, member_pointers, object_pointers, object_with_duplicate, splice, Case,
    Expectation, Rng, Upstream,
};
use crate::corpus::{Corpus, Expect, Fixture, FixtureKind};

/// Every class the adversary produces, with what it does.
pub const CLASSES: &[(&str, &str)] = &[
    ("fixture", "every fixture of the corpus as it is"),
    ("extra_property", "an extra member in every object: canary name and value, admin_override, approved, role"),
    ("missing_member", "every member of every object removed, one at a time"),
    ("type_swap", "every member's value swapped for null, a boolean, a number, a string, an array, an object"),
    ("duplicate_member", "every member written twice, both orders, with a conflicting canary value and with the same value"),
    ("oversize", "a valid body padded with whitespace one byte and far past max_bytes"),
    ("exact_limit", "a valid body padded with whitespace to exactly max_bytes"),
    ("deep_nesting", "nesting one past max_depth in place of a member, and as deep as max_bytes allows"),
    ("request_id_mismatch", "a response answering another request id"),
    ("binding_mismatch", "a request whose parameters disagree with the response, one per binding check"),
    ("freshness", "a request time that makes each fresh field just stale and just future"),
    ("transport_error", "every transport error"),
    ("random_mutation", "seeded chains of byte and member mutations"),
];

struct Builder<'a> {
    seed: u64,
    contract: &'a Contract,
    cases: Vec<Case>,
    ids: BTreeSet<String>,
}

impl Builder<'_> {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        class: &str,
        origin: Option<&str>,
        location: &str,
        suffix: &str,
        request: &Request,
        upstream: Upstream,
        canaries: Vec<String>,
        expect: Expectation,
    ) {
        let mut id = format!("{class}/{}{location}", origin.unwrap_or("-"));
        if !suffix.is_empty() {
            id.push('#');
            id.push_str(suffix);
        }
        let mut unique = id.clone();
        let mut n = 2;
        while !self.ids.insert(unique.clone()) {
            unique = format!("{id}~{n}");
            n += 1;
        }
        self.cases.push(Case {
            id: unique,
            class: class.to_owned(),
            location: location.to_owned(),
            origin: origin.map(str::to_owned),
            request: request.clone(),
            upstream,
            canaries,
            expect,
        });
    }

    fn canary(&self, class: &str, origin: &str, location: &str, n: u32) -> String {
        canary(
            self.seed,
            &format!("{}/{class}/{origin}{location}", self.contract.tool()),
            n,
        )
    }
}

/// All cases for `contract` with its `corpus`: fixtures, deterministic variants, and
/// `random` seeded mutation chains. The same inputs give the same cases, in order.
pub fn generate(contract: &Contract, corpus: &Corpus, seed: u64, random: usize) -> Vec<Case> {
    let mut b = Builder {
        seed,
        contract,
        cases: Vec::new(),
        ids: BTreeSet::new(),
    };
    for fixture in &corpus.fixtures {
        let expect = match (fixture.kind, fixture.expect) {
            (_, Expect::Accept) => Expectation::Admit,
            (_, Expect::Reject) => Expectation::Reject,
        };
        let location = match fixture.kind {
            FixtureKind::Historical { version } => format!("@historical/{version}"),
            kind => format!("@{kind}"),
        };
        b.push(
            "fixture",
            Some(&fixture.name),
            &location,
            "",
            &fixture.request,
            Upstream::Body(fixture.bytes.clone()),
            Vec::new(),
            expect,
        );
    }
    let accepted: Vec<(&Fixture, Value)> = corpus
        .fixtures
        .iter()
        .filter(|f| f.kind == FixtureKind::Accepted)
        .filter_map(|f| {
            airlock_guard::parse(&f.bytes, usize::MAX)
                .ok()
                .map(|v| (f, v))
        })
        .collect();
    for (fixture, value) in &accepted {
        derived(&mut b, fixture, value);
    }
    for error in TransportError::ALL {
        b.push(
            "transport_error",
            None,
            "",
            error.as_str(),
            &corpus.request,
            Upstream::Transport(error),
            Vec::new(),
            Expectation::Transport,
        );
    }
    random_mutations(&mut b, &accepted, random);
    b.cases
}

fn derived(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let origin = fixture.name.as_str();
    let request = &fixture.request;
    let limits = b.contract.limits();
    let body = |v: &Value| Upstream::Body(serde_json::to_vec(v).unwrap_or_default());

    for pointer in object_pointers(value) {
        let name_canary = b.canary("extra_property", origin, &pointer, 0);
        let value_canary = b.canary("extra_property", origin, &pointer, 1);
        let extras = [
            (
                name_canary.clone(),
                Value::String(value_canary.clone()),
                vec![name_canary.clone(), value_canary.clone()],
            ),
            ("admin_override".to_owned(), json!(true), vec![]),
            ("approved".to_owned(), json!(true), vec![]),
            ("role".to_owned(), json!("admin"), vec![]),
        ];
        for (name, extra, canaries) in extras {
            let mut v = value.clone();
            let Some(Value::Object(map)) = v.pointer_mut(&pointer) else {
                continue;
            };
            if map.contains_key(&name) {
                continue;
            }
            map.insert(name.clone(), extra);
            let location = format!("{pointer}/{}", escape_token(&name));
            let suffix = if canaries.is_empty() {
                name.as_str()
            } else {
                "canary"
            };
            b.push(
                "extra_property",
                Some(origin),
                &location,
                suffix,
                request,
                body(&v),
                canaries,
                Expectation::Reference,
            );
        }
    }

    for (parent, name) in member_pointers(value) {
        let location = format!("{parent}/{}", escape_token(&name));
        let mut removed = value.clone();
        if let Some(Value::Object(map)) = removed.pointer_mut(&parent) {
            map.shift_remove(&name);
        }
        b.push(
            "missing_member",
            Some(origin),
            &location,
            "",
            request,
            body(&removed),
            Vec::new(),
            Expectation::Reference,
        );

        let original = value.pointer(&location).cloned().unwrap_or(Value::Null);
        let swap_canary = b.canary("type_swap", origin, &location, 0);
        let swaps = [
            ("null", Value::Null),
            ("bool", json!(true)),
            ("string_true", json!("true")),
            ("number", json!(12345)),
            ("numeric_string", json!("12345")),
            ("string", Value::String(swap_canary.clone())),
            ("array", json!([swap_canary.clone()])),
            ("object", json!({ "value": swap_canary.clone() })),
        ];
        for (kind, replacement) in swaps {
            if std::mem::discriminant(&replacement) == std::mem::discriminant(&original)
                && kind != "string"
            {
                continue;
            }
            if replacement == original {
                continue;
            }
            let mut v = value.clone();
            if let Some(slot) = v.pointer_mut(&location) {
                *slot = replacement;
            }
            let canaries = if ["string", "array", "object"].contains(&kind) {
                vec![swap_canary.clone()]
            } else {
                vec![]
            };
            b.push(
                "type_swap",
                Some(origin),
                &location,
                kind,
                request,
                body(&v),
                canaries,
                Expectation::Reference,
            );
        }

        let Some(Value::Object(object)) = value.pointer(&parent) else {
            continue;
        };
        let dup_canary = b.canary("duplicate_member", origin, &location, 0);
        let conflicting = Value::String(dup_canary.clone());
        let orders: [(&str, &Value, &Value, Vec<String>); 3] = [
            (
                "original_first",
                &original,
                &conflicting,
                vec![dup_canary.clone()],
            ),
            (
                "original_last",
                &conflicting,
                &original,
                vec![dup_canary.clone()],
            ),
            ("same_value", &original, &original, vec![]),
        ];
        for (order, first, second, canaries) in orders {
            let raw = object_with_duplicate(object, &name, first, second);
            if let Some(bytes) = splice(value, &parent, &raw) {
                b.push(
                    "duplicate_member",
                    Some(origin),
                    &location,
                    order,
                    request,
                    Upstream::Body(bytes),
                    canaries,
                    Expectation::Reject,
                );
            }
        }
    }

    let compact = serde_json::to_vec(value).unwrap_or_default();
    let max_bytes = usize::try_from(limits.max_bytes).unwrap_or(usize::MAX);
    if compact.len() <= max_bytes && max_bytes < 64 * 1024 * 1024 {
        let pad = |len: usize| {
            let mut padded = compact.clone();
            padded.resize(len, b' ');
            padded
        };
        b.push(
            "exact_limit",
            Some(origin),
            &format!("byte:{max_bytes}"),
            "",
            request,
            Upstream::Body(pad(max_bytes)),
            Vec::new(),
            Expectation::Reference,
        );
        b.push(
            "oversize",
            Some(origin),
            &format!("byte:{max_bytes}"),
            "one_past",
            request,
            Upstream::Body(pad(max_bytes + 1)),
            Vec::new(),
            Expectation::Reject,
        );
        b.push(
            "oversize",
            Some(origin),
            &format!("byte:{max_bytes}"),
            "far_past",
            request,
            Upstream::Body(pad(max_bytes * 4 + 1)),
            Vec::new(),
            Expectation::Reject,
        );
        let deep = limits.max_depth + 1;
        let nested = format!("{}{}", "[".repeat(deep), "]".repeat(deep));
        for (parent, name) in member_pointers(value).into_iter().take(1) {
            let location = format!("{parent}/{}", escape_token(&name));
            if let Some(bytes) = splice(value, &location, nested.as_bytes()) {
                b.push(
                    "deep_nesting",
                    Some(origin),
                    &location,
                    "one_past_max_depth",
                    request,
                    Upstream::Body(bytes),
                    Vec::new(),
                    Expectation::Reject,
                );
            }
        }
        let half = max_bytes / 2;
        b.push(
            "deep_nesting",
            Some(origin),
            "byte:0",
            "closed_to_max_bytes",
            request,
            Upstream::Body(format!("{}{}", "[".repeat(half), "]".repeat(half)).into_bytes()),
            Vec::new(),
            Expectation::Reject,
        );
        b.push(
            "deep_nesting",
            Some(origin),
            "byte:0",
            "unclosed_to_max_bytes",
            request,
            Upstream::Body(vec![b'['; max_bytes]),
            Vec::new(),
            Expectation::Reject,
        );
    }

    if value.get("request_id").is_some() {
        let mut v = value.clone();
        let other = if request.request_id == "req.Mismatch01" {
            "req.Mismatch02"
        } else {
            "req.Mismatch01"
        };
        v["request_id"] = json!(other);
        b.push(
            "request_id_mismatch",
            Some(origin),
            "/request_id",
            "",
            request,
            body(&v),
            Vec::new(),
            Expectation::Reject,
        );
    }

    for (i, check) in b.contract.checks().to_vec().iter().enumerate() {
        let Some(field_value) = check.field().resolve(value) else {
            continue;
        };
        let location = check.field().as_str().to_owned();
        match check {
            CheckSpec::EqualsParam { param, .. } => {
                let mut r = request.clone();
                let other = b.canary("binding_mismatch", origin, &location, i as u32);
                r.params.insert(param.clone(), Value::String(other));
                b.push(
                    "binding_mismatch",
                    Some(origin),
                    &location,
                    &format!("equals_param:{param}"),
                    &r,
                    body(value),
                    Vec::new(),
                    Expectation::Reject,
                );
            }
            CheckSpec::InParam { param, .. } => {
                let mut r = request.clone();
                let allowed: Vec<Value> = match r.params.get(param) {
                    Some(Value::Array(items)) => items
                        .iter()
                        .filter(|v| *v != field_value)
                        .cloned()
                        .collect(),
                    _ => Vec::new(),
                };
                r.params.insert(param.clone(), Value::Array(allowed));
                b.push(
                    "binding_mismatch",
                    Some(origin),
                    &location,
                    &format!("in_param:{param}"),
                    &r,
                    body(value),
                    Vec::new(),
                    Expectation::Reject,
                );
            }
            CheckSpec::Fresh {
                max_age, max_skew, ..
            } => {
                let Some(time) = field_value
                    .as_str()
                    .and_then(|s| s.parse::<airlock_guard::jiff::Timestamp>().ok())
                else {
                    continue;
                };
                let one = airlock_guard::jiff::SignedDuration::from_secs(1);
                let edges = [
                    (
                        "just_stale",
                        time.checked_add(*max_age + one),
                        Expectation::Reject,
                    ),
                    (
                        "edge_max_age",
                        time.checked_add(*max_age),
                        Expectation::Reference,
                    ),
                    (
                        "just_future",
                        time.checked_sub(*max_skew + one),
                        Expectation::Reject,
                    ),
                    (
                        "edge_max_skew",
                        time.checked_sub(*max_skew),
                        Expectation::Reference,
                    ),
                ];
                for (name, now, expect) in edges {
                    let Ok(now) = now else { continue };
                    let mut r = request.clone();
                    r.now = now;
                    b.push(
                        "freshness",
                        Some(origin),
                        &location,
                        name,
                        &r,
                        body(value),
                        Vec::new(),
                        expect,
                    );
                }
            }
            _ => {}
        }
    }
}

fn random_mutations(b: &mut Builder<'_>, accepted: &[(&Fixture, Value)], count: usize) {
    if accepted.is_empty() {
        return;
    }
    let mut rng = Rng::new(b.seed, b.contract.tool());
    for n in 0..count {
        let (fixture, value) = &accepted[rng.below(accepted.len())];
        let mut bytes = serde_json::to_vec(value).unwrap_or_default();
        let mut canaries = Vec::new();
        let mut ops = Vec::new();
        for step in 0..1 + rng.below(3) {
            let len = bytes.len().max(1);
            let at = rng.below(len);
            match rng.below(7) {
                0 if !bytes.is_empty() => {
                    let i = at.min(bytes.len() - 1);
                    bytes[i] = (rng.next_u64() & 0xff) as u8;
                    ops.push("flip");
                }
                1 => {
                    let (i, byte) = (at.min(bytes.len()), (rng.next_u64() & 0xff) as u8);
                    bytes.insert(i, byte);
                    ops.push("insert");
                }
                2 if !bytes.is_empty() => {
                    let i = at.min(bytes.len() - 1);
                    bytes.remove(i);
                    ops.push("delete");
                }
                3 => {
                    bytes.truncate(at);
                    ops.push("truncate");
                }
                4 => {
                    // A canary member right after a random '{'.
                    let opens: Vec<usize> = bytes
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| **c == b'{')
                        .map(|(i, _)| i)
                        .collect();
                    if let Some(&open) = opens.get(rng.below(opens.len().max(1))) {
                        let token = canary(
                            b.seed,
                            &format!("{}/random/{n}", b.contract.tool()),
                            step as u32,
                        );
                        let member = format!("\"{token}\":\"{token}\",");
                        bytes.splice(open + 1..open + 1, member.bytes());
                        canaries.push(token);
                        ops.push("canary_member");
                    }
                }
                5 => {
                    let end = (at + 1 + rng.below(16)).min(bytes.len());
                    let slice = bytes[at.min(end)..end].to_vec();
                    bytes.splice(end..end, slice);
                    ops.push("repeat_slice");
                }
                _ => {
                    let mut v = value.clone();
                    let members = member_pointers(&v);
                    if let Some((parent, name)) = members.get(rng.below(members.len().max(1))) {
                        let token = canary(
                            b.seed,
                            &format!("{}/random/{n}", b.contract.tool()),
                            100 + step as u32,
                        );
                        if let Some(Value::Object(map)) = v.pointer_mut(parent) {
                            map.insert(name.clone(), Value::String(token.clone()));
                        }
                        canaries.push(token);
                        bytes = serde_json::to_vec(&v).unwrap_or_default();
                        ops.push("replace_value");
                    }
                }
            }
        }
        let suffix = format!("{n}:{}", ops.join("+"));
        b.push(
            "random_mutation",
            Some(&fixture.name),
            "",
            &suffix,
            &fixture.request,
            Upstream::Body(bytes),
            canaries,
            Expectation::Reference,
        );
    }
}
