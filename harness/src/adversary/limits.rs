//! Size and depth at and past the contract's limits: a body padded to exactly
//! `max_bytes` and past it, nesting one past `max_depth` and as deep as the bytes allow.

use serde_json::Value;

use super::{padded, Builder};
use crate::cases::{escape_token, member_pointers, splice, Expectation, Upstream};
use crate::corpus::Fixture;

/// exact_limit, oversize, deep_nesting.
pub(super) fn size_and_depth(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let origin = fixture.name.as_str();
    let request = &fixture.request;
    let limits = b.contract.limits();
    let compact = serde_json::to_vec(value).unwrap_or_default();
    let max_bytes = usize::try_from(limits.max_bytes).unwrap_or(usize::MAX);
    if compact.len() <= max_bytes && max_bytes < 64 * 1024 * 1024 {
        let compact: std::sync::Arc<[u8]> = compact.into();
        let pad = |len: usize| padded(&compact, len);
        b.push_later(
            "exact_limit",
            Some(origin),
            &format!("byte:{max_bytes}"),
            "",
            request,
            pad(max_bytes),
            Vec::new(),
            Expectation::Reference,
        );
        b.push_later(
            "oversize",
            Some(origin),
            &format!("byte:{max_bytes}"),
            "one_past",
            request,
            pad(max_bytes + 1),
            Vec::new(),
            Expectation::Reject,
        );
        b.push_later(
            "oversize",
            Some(origin),
            &format!("byte:{max_bytes}"),
            "far_past",
            request,
            pad(max_bytes * 4 + 1),
            Vec::new(),
            Expectation::Reject,
        );
        deep_members(b, fixture, value);
        let half = max_bytes / 2;
        b.push_later(
            "deep_nesting",
            Some(origin),
            "byte:0",
            "closed_to_max_bytes",
            request,
            move || format!("{}{}", "[".repeat(half), "]".repeat(half)).into_bytes(),
            Vec::new(),
            Expectation::Reject,
        );
        b.push_later(
            "deep_nesting",
            Some(origin),
            "byte:0",
            "unclosed_to_max_bytes",
            request,
            move || vec![b'['; max_bytes],
            Vec::new(),
            Expectation::Reject,
        );
    }
}

/// deep_nesting at members: the first member one past `max_depth`; members the contract
/// leaves free (no schema judges them: an unmapped member of an open vendor document)
/// nested exactly to `max_depth` and one past it, so that the parser's depth limit
/// decides and nothing else. (An MCP message's members are the protocol's: its free
/// places, `_meta`, are varied by `mcp-result-members`.)
fn deep_members(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let origin = fixture.name.as_str();
    let request = &fixture.request;
    let limits = b.contract.limits();
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
    let free = member_pointers(value)
        .into_iter()
        .filter(|_| !b.is_mcp())
        .map(|(parent, name)| format!("{parent}/{}", escape_token(&name)))
        .filter(|at| b.schemas_at(at).is_empty())
        .take(4);
    for location in free.collect::<Vec<_>>() {
        let containers = location.matches('/').count();
        for (suffix, depth, expect) in [
            (
                "free_member_at_max_depth",
                limits.max_depth,
                Expectation::Reference,
            ),
            (
                "free_member_one_past_max_depth",
                limits.max_depth + 1,
                Expectation::Reject,
            ),
        ] {
            let Some(k) = depth.checked_sub(containers).filter(|k| *k > 0) else {
                continue;
            };
            let nested = format!("{}{}", "[".repeat(k), "]".repeat(k));
            if let Some(bytes) = splice(value, &location, nested.as_bytes()) {
                b.push(
                    "deep_nesting",
                    Some(origin),
                    &location,
                    suffix,
                    request,
                    Upstream::Body(bytes),
                    Vec::new(),
                    expect,
                );
            }
        }
    }
}
