//! Shape variants: objects wrapped in arrays, envelopes crossed (a success that also
//! carries `error`), arrays one past `maxItems` and past the byte limit.

use serde_json::{json, Value};

use super::Builder;
use crate::cases::{escape_token, member_pointers, object_pointers, splice, Expectation, Upstream};
use crate::corpus::Fixture;

/// Objects wrapped in an array, and envelopes crossed: a success that also carries an
/// `error`, a failure that also carries `data`.
pub(super) fn shapes(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let origin = fixture.name.as_str();
    let body = |v: &Value| Upstream::Body(serde_json::to_vec(v).unwrap_or_default());
    for pointer in object_pointers(value).into_iter().filter(|p| !p.is_empty()) {
        let mut v = value.clone();
        if let Some(slot) = v.pointer_mut(&pointer) {
            *slot = Value::Array(vec![slot.take()]);
        }
        b.push(
            "type_swap",
            Some(origin),
            &pointer,
            "wrapped_in_array",
            &fixture.request,
            body(&v),
            Vec::new(),
            Expectation::Reference,
        );
    }
    arrays(b, fixture, value);
    // An MCP tool's structuredContent has no outcome to cross.
    let Some(envelope) = value.as_object().filter(|_| !b.is_mcp()) else {
        return;
    };
    let token = b.canary("extra_property", origin, "/crossed", 0);
    let (member, extra, suffix) = match envelope.get("outcome").and_then(Value::as_str) {
        Some("success") => (
            "error",
            json!({"code": "NOT_FOUND", "retryable": false}),
            "success_with_error",
        ),
        Some("failure") => (
            "data",
            json!({ "note": token.clone() }),
            "failure_with_data",
        ),
        _ => return,
    };
    if envelope.contains_key(member) {
        return;
    }
    let mut v = value.clone();
    v[member] = extra;
    let canaries = if member == "data" {
        vec![token]
    } else {
        Vec::new()
    };
    b.push(
        "extra_property",
        Some(origin),
        &format!("/{member}"),
        suffix,
        &fixture.request,
        body(&v),
        canaries,
        Expectation::Reference,
    );
}

/// The compact JSON of `value` with the non-empty array `items` at `pointer` grown to
/// `target` items by repeating its last: the bytes `serde_json::to_vec` gives for the
/// grown value, written without building it.
fn grown(value: &Value, pointer: &str, items: &[Value], target: usize) -> Vec<u8> {
    let (Some(last), true) = (items.last(), target >= items.len()) else {
        let mut v = value.clone();
        if let Some(Value::Array(present)) = v.pointer_mut(pointer) {
            present.resize(target, items.last().cloned().unwrap_or_default());
        }
        return serde_json::to_vec(&v).unwrap_or_default();
    };
    let mut array = serde_json::to_vec(items).unwrap_or_default();
    let item = serde_json::to_vec(last).unwrap_or_default();
    array.pop(); // the closing bracket
    array.reserve((target - items.len()) * (item.len() + 1) + 1);
    for _ in items.len()..target {
        array.push(b',');
        array.extend_from_slice(&item);
    }
    array.push(b']');
    splice(value, pointer, &array).unwrap_or_default()
}

/// Every non-empty array grown one past its schema's `maxItems`, and far past the byte
/// limit, by repeating its last item.
fn arrays(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let max_bytes = usize::try_from(b.contract.limits().max_bytes).unwrap_or(usize::MAX);
    for (parent, name) in member_pointers(value) {
        let pointer = format!("{parent}/{}", escape_token(&name));
        let Some(Value::Array(items)) = value.pointer(&pointer) else {
            continue;
        };
        let Some(last) = items.last() else { continue };
        let item_len = serde_json::to_vec(last).map_or(1, |t| t.len() + 1);
        let max_items = b
            .schemas_at(&pointer)
            .iter()
            .find_map(|s| s.get("maxItems").and_then(Value::as_u64))
            .and_then(|m| usize::try_from(m).ok());
        let mut grow = |target: usize, suffix: &str| {
            // Built when wanted (`push_later`): up to twice `max_bytes` of JSON, written
            // as text (the array's JSON, its last item's repeated) rather than through a
            // value of a million items, which took ten times the body's size to build.
            let (value, at, items) = (value.clone(), pointer.clone(), items.clone());
            let build = move || grown(&value, &at, &items, target);
            b.push_later(
                "array_edge",
                Some(&fixture.name),
                &pointer,
                suffix,
                &fixture.request,
                build,
                Vec::new(),
                Expectation::Reference,
            );
        };
        if let Some(max) = max_items
            .filter(|m| m.saturating_add(1).saturating_mul(item_len) <= 4 * max_bytes.max(1024))
        {
            grow(max + 1, "one_past_max_items");
        }
        if max_bytes < 16 * 1024 * 1024 {
            grow(items.len() + 2 * max_bytes / item_len + 1, "very_large");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `grown` writes the bytes serde_json writes for the grown value.
    #[test]
    fn a_grown_array_is_the_grown_values_json() {
        let value = json!({"a": {"list": [{"x": "é\u{1}"}, [1, 2.5, null]], "k": "v"}, "z": 1});
        let items = value["a"]["list"].as_array().unwrap().clone();
        for target in [2, 3, 10, 1000] {
            let mut v = value.clone();
            v["a"]["list"]
                .as_array_mut()
                .unwrap()
                .resize(target, items[1].clone());
            assert_eq!(
                grown(&value, "/a/list", &items, target),
                serde_json::to_vec(&v).unwrap(),
                "{target}"
            );
        }
    }
}
