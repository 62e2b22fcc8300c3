//! Once per contract: well-formed upstream failure envelopes for every error code; then
//! seeded random mutation chains, half of them on top of another class's variant.

use airlock_guard::ErrorCode;
use serde_json::{json, Value};

use super::Builder;
use crate::cases::{canary, member_pointers, Expectation, Rng, Upstream};
use crate::corpus::{Corpus, Fixture};

/// upstream_failure: a well-formed failure envelope answering the corpus's default
/// request, for every error code, claiming retryable and not (the policy decides).
pub(super) fn upstream_failures(b: &mut Builder<'_>, corpus: &Corpus) {
    let request = &corpus.request;
    for code in ErrorCode::ENVELOPE {
        for retryable in [false, true] {
            let envelope = json!({
                "tool": b.contract.tool(),
                "request_id": request.request_id,
                "outcome": "failure",
                "error": {"code": code.as_str(), "retryable": retryable},
            });
            b.push(
                "upstream_failure",
                None,
                "/error",
                &format!("{code}:retryable={retryable}"),
                request,
                Upstream::Body(serde_json::to_vec(&envelope).unwrap_or_default()),
                Vec::new(),
                Expectation::Reference,
            );
        }
    }
}

pub(super) fn random_mutations(b: &mut Builder<'_>, accepted: &[(&Fixture, Value)], count: usize) {
    if accepted.is_empty() {
        return;
    }
    let mut rng = Rng::new(b.seed, b.contract.tool());
    // Half the chains start from a deterministic variant instead of a fixture, so that
    // classes compose (a duplicate inside a truncated body, a swap past the limit …).
    let deterministic = b.cases.len();
    for n in 0..count {
        let (fixture, value) = &accepted[rng.below(accepted.len())];
        let mut chain = Chain {
            bytes: super::body_bytes(value),
            canaries: Vec::new(),
            ops: Vec::new(),
            request: fixture.request.clone(),
            origin: fixture.name.clone(),
        };
        // A chain on a body left to build later is built later too: its base's build,
        // then the same steps drawn again from the same state of the generator.
        let mut later_base = None;
        if deterministic > 0 && rng.below(2) == 0 {
            let base = &b.cases[rng.below(deterministic)];
            if let (Upstream::Body(base_bytes), Some(base_origin)) = (&base.upstream, &base.origin)
            {
                later_base = b.later.as_ref().and_then(|later| later.build_of(&base.id));
                match &later_base {
                    Some(build) => chain.bytes = build(),
                    None => chain.bytes.clone_from(base_bytes),
                }
                chain.canaries.clone_from(&base.canaries);
                chain.request = base.request.clone();
                chain.origin.clone_from(base_origin);
                chain.ops.push(base.class.clone());
            }
        }
        let salt = format!("{}/random/{n}", b.contract.tool());
        let steps = 1 + rng.below(3);
        let before = rng.clone();
        for step in 0..steps {
            mutate(&mut rng, (b.seed, &salt, step as u32), value, &mut chain);
        }
        let suffix = format!("{n}:{}", chain.ops.join("+"));
        let Some(base) = later_base else {
            b.push(
                "random_mutation",
                Some(&chain.origin),
                "",
                &suffix,
                &chain.request,
                Upstream::Body(chain.bytes),
                chain.canaries,
                Expectation::Reference,
            );
            continue;
        };
        let (seed, value, request) = (b.seed, value.clone(), chain.request.clone());
        let build = move || {
            let mut chain = Chain {
                bytes: base(),
                canaries: Vec::new(),
                ops: Vec::new(),
                request: request.clone(),
                origin: String::new(),
            };
            let mut rng = before.clone();
            for step in 0..steps {
                mutate(&mut rng, (seed, &salt, step as u32), &value, &mut chain);
            }
            chain.bytes
        };
        b.push_later(
            "random_mutation",
            Some(&chain.origin),
            "",
            &suffix,
            &chain.request,
            build,
            chain.canaries,
            Expectation::Reference,
        );
    }
}

/// A random mutation chain as it grows: the body, its canaries, the operations applied,
/// the request and the origin of its start.
struct Chain {
    bytes: Vec<u8>,
    canaries: Vec<String>,
    ops: Vec<String>,
    request: airlock_guard::Request,
    origin: String,
}

/// One step of a chain, drawn from `rng`: a byte flipped, inserted or deleted, the body
/// truncated, a canary line or value (a command's output, its base a JSON string) or a
/// canary member, a slice repeated, a member's value replaced by a canary (canaries made
/// from the seed, the chain's salt and the step).
fn mutate(rng: &mut Rng, (seed, salt, step): (u64, &str, u32), value: &Value, chain: &mut Chain) {
    // A command's output (its base a JSON string) gets its canaries in lines.
    let text = value.is_string();
    let bytes = &mut chain.bytes;
    let len = bytes.len().max(1);
    let at = rng.below(len);
    match rng.below(7) {
        0 if !bytes.is_empty() => {
            let i = at.min(bytes.len() - 1);
            bytes[i] = (rng.next_u64() & 0xff) as u8;
            chain.ops.push("flip".into());
        }
        1 => {
            let (i, byte) = (at.min(bytes.len()), (rng.next_u64() & 0xff) as u8);
            bytes.insert(i, byte);
            chain.ops.push("insert".into());
        }
        2 if !bytes.is_empty() => {
            let i = at.min(bytes.len() - 1);
            bytes.remove(i);
            chain.ops.push("delete".into());
        }
        3 => {
            bytes.truncate(at);
            chain.ops.push("truncate".into());
        }
        4 | 6 if text => canary_in_lines(rng, canary(seed, salt, step), chain),
        4 => {
            // A canary member right after a random '{'.
            let opens: Vec<usize> = bytes
                .iter()
                .enumerate()
                .filter(|(_, c)| **c == b'{')
                .map(|(i, _)| i)
                .collect();
            if let Some(&open) = opens.get(rng.below(opens.len().max(1))) {
                let token = canary(seed, salt, step);
                let member = format!("\"{token}\":\"{token}\",");
                bytes.splice(open + 1..open + 1, member.bytes());
                chain.canaries.push(token);
                chain.ops.push("canary_member".into());
            }
        }
        5 => {
            let end = (at + 1 + rng.below(16)).min(bytes.len());
            let slice = bytes[at.min(end)..end].to_vec();
            bytes.splice(end..end, slice);
            chain.ops.push("repeat_slice".into());
        }
        _ => {
            let mut v = value.clone();
            let members = member_pointers(&v);
            if let Some((parent, name)) = members.get(rng.below(members.len().max(1))) {
                let token = canary(seed, salt, 100 + step);
                if let Some(Value::Object(map)) = v.pointer_mut(parent) {
                    map.insert(name.clone(), Value::String(token.clone()));
                }
                chain.canaries.push(token);
                chain.bytes = serde_json::to_vec(&v).unwrap_or_default();
                chain.ops.push("replace_value".into());
            }
        }
    }
}

/// A canary line at a random line start, or a random line's value replaced by the
/// canary (nothing when the body has no line).
fn canary_in_lines(rng: &mut Rng, token: String, chain: &mut Chain) {
    let bytes = &mut chain.bytes;
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, c)| **c == b'\n')
                .map(|(i, _)| i + 1),
        )
        .filter(|i| *i < bytes.len())
        .collect();
    let Some(&start) = starts.get(rng.below(starts.len().max(1))) else {
        return;
    };
    if rng.below(2) == 0 {
        let line = format!("{token}={token}\n");
        bytes.splice(start..start, line.bytes());
        chain.ops.push("canary_line".into());
    } else {
        let end = bytes[start..]
            .iter()
            .position(|c| *c == b'\n')
            .map_or(bytes.len(), |p| start + p);
        let sep = bytes[start..end]
            .iter()
            .position(|c| *c == b'=' || *c == b':')
            .map_or(end, |p| start + p + 1);
        bytes.splice(sep..end, token.bytes());
        chain.ops.push("canary_value".into());
    }
    chain.canaries.push(token);
}
