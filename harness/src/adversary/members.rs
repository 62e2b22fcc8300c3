//! Member-level variants of an accepted body: extra members (canaries, privilege flags),
//! each member removed, its type swapped, written twice.

use serde_json::{json, Value};

use super::Builder;
use crate::cases::{
    escape_token, escaped_first_char, member_pointers, object_pointers, object_with_duplicate,
    object_with_duplicate_key, splice, Expectation, Upstream,
};
use crate::corpus::Fixture;

/// extra_property: a canary member and privilege flags added to every object.
pub(super) fn extra_properties(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let origin = fixture.name.as_str();
    let request = &fixture.request;
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
}

/// missing_member, type_swap, duplicate_member: every member removed, swapped and
/// written twice.
pub(super) fn member_variants(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let origin = fixture.name.as_str();
    let request = &fixture.request;
    let body = |v: &Value| Upstream::Body(serde_json::to_vec(v).unwrap_or_default());
    absent_as_null(b, fixture, value);

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
        // The same name once plainly and once with an escape: equal after unescaping.
        if let Some(key) = escaped_first_char(&name) {
            let raw = object_with_duplicate_key(object, &name, &key, &original, &conflicting);
            if let Some(bytes) = splice(value, &parent, &raw) {
                b.push(
                    "duplicate_member",
                    Some(origin),
                    &location,
                    "escaped_key",
                    request,
                    Upstream::Body(bytes),
                    vec![dup_canary.clone()],
                    Expectation::Reject,
                );
            }
        }
    }
}

/// type_swap `null_for_absent`: every member the schema declares at an object of the
/// base but the base leaves out, present as `null` (an adapter that drops a `null` member
/// instead of judging it admits what the schema refuses). The reference decides.
fn absent_as_null(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    let mut declared = std::collections::BTreeSet::new();
    let mut documents = vec![b.contract.schema().document()];
    if let Some(vendor) = b.contract.vendor_schema() {
        documents.push(vendor.document());
    }
    for document in documents {
        property_names(document, &mut declared);
    }
    let mut objects: Vec<String> = vec![String::new()];
    for (parent, _) in member_pointers(value) {
        if !objects.contains(&parent) {
            objects.push(parent);
        }
    }
    // A wide schema whose bases leave most members out would make a case per member:
    // the first `MAX_ABSENT` per base are enough to find an adapter that drops nulls.
    let mut left = MAX_ABSENT;
    // And the lookups bounded too: a wide schema times a base of many objects.
    let mut lookups = MAX_ABSENT_LOOKUPS;
    for parent in objects {
        let Some(Value::Object(object)) = value.pointer(&parent) else {
            continue;
        };
        for name in declared.iter().filter(|n| !object.contains_key(n.as_str())) {
            let location = format!("{parent}/{}", escape_token(name));
            if left == 0 || lookups == 0 {
                return;
            }
            lookups -= 1;
            if b.schemas_at(&location).is_empty() {
                continue;
            }
            left -= 1;
            let mut v = value.clone();
            if let Some(Value::Object(map)) = v.pointer_mut(&parent) {
                map.insert(name.clone(), Value::Null);
            }
            b.push(
                "type_swap",
                Some(&fixture.name),
                &location,
                "null_for_absent",
                &fixture.request,
                Upstream::Body(serde_json::to_vec(&v).unwrap_or_default()),
                Vec::new(),
                Expectation::Reference,
            );
        }
    }
}

/// At most this many `null_for_absent` cases per base.
const MAX_ABSENT: usize = 64;

/// At most this many declared names looked up in the schema per base.
const MAX_ABSENT_LOOKUPS: usize = 4096;

/// Every name a `properties` keyword of `schema` declares, at any depth.
fn property_names(schema: &Value, out: &mut std::collections::BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = map.get("properties") {
                out.extend(properties.keys().cloned());
            }
            for v in map.values() {
                property_names(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| property_names(v, out)),
        _ => {}
    }
}
