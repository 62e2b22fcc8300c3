//! The request's side: a response answering another request id, requests whose
//! parameters disagree with the response, request times at the freshness edges.

use airlock_guard::CheckSpec;
use serde_json::{json, Value};

use super::Builder;
use crate::cases::{Expectation, Upstream};
use crate::corpus::Fixture;

/// request_id_mismatch, binding_mismatch, freshness.
pub(super) fn request_variants(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let origin = fixture.name.as_str();
    let request = &fixture.request;
    let body = |v: &Value| Upstream::Body(serde_json::to_vec(v).unwrap_or_default());

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
