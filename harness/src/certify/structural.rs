//! The structural comparison: the two schema documents walked by instance location, the
//! keywords at each location compared where they apply to a type both versions admit (no
//! "maxLength added" for a member that stopped being a string), and `anyOf`/`oneOf`/`allOf`
//! compared branch by branch. The fallback when the algebra cannot decide.

use serde_json::Value;
use std::collections::BTreeSet;

use super::keywords::{branches, compare, lifted};
use super::subschemas::{closed, resolve};
use super::{Change, Class, Evidence, Focus, View};
use crate::base::pointer::parent_and_name;
use crate::schema::schema_at;

/// At most this many locations are compared (a recursive schema describes endless ones).
const MAX_LOCATIONS: usize = 4096;
/// And at most this deep.
const MAX_LOCATION_DEPTH: usize = 8;
/// `$ref`s and `allOf`s followed in place at one location.
const MAX_IN_PLACE: usize = 64;

/// Every instance location the schema describes, through `properties`, `items`,
/// `prefixItems` (or an `items` tuple and `additionalItems`), local `$ref`s and
/// composition (bounded in count and depth).
pub(crate) fn locations(document: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut todo = vec![String::new()];
    while let Some(pointer) = todo.pop() {
        if out.len() >= MAX_LOCATIONS
            || pointer.matches('/').count() > MAX_LOCATION_DEPTH
            || !out.insert(pointer.clone())
        {
            continue;
        }
        for schema in schema_at(document, &pointer) {
            for name in schema
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|p| p.keys())
            {
                todo.push(format!("{pointer}/{}", crate::cases::escape_token(name)));
            }
            // A tuple is `prefixItems`, or in draft-07/2019-09 an `items` array (then
            // `additionalItems` for the rest).
            let tuple = ["prefixItems", "items"]
                .into_iter()
                .find_map(|k| schema.get(k).and_then(Value::as_array))
                .map_or(0, Vec::len);
            todo.extend((0..tuple).map(|i| format!("{pointer}/{i}")));
            let rest = |k: &str| schema.get(k).is_some_and(Value::is_object);
            if rest("items") || rest("additionalItems") {
                todo.push(format!("{pointer}/{tuple}"));
            }
        }
    }
    out
}

/// The schemas that apply at a location together: those `schema_at` finds, minus the
/// branches of an `anyOf`/`oneOf` written *at* the location (those are alternatives,
/// compared branch by branch), plus what `$ref` and `allOf` bring in place.
pub(crate) fn conjunction<'s>(document: &'s Value, pointer: &str) -> Vec<&'s Value> {
    let all = schema_at(document, pointer);
    let mut alternatives: BTreeSet<*const Value> = BTreeSet::new();
    let (parent, _) = parent_and_name(pointer);
    let parents = if pointer.is_empty() {
        Vec::new()
    } else {
        schema_at(document, parent)
    };
    // The nodes a parent names for the member itself: the location's own schemas.
    let own: Vec<&Value> = if pointer.is_empty() {
        vec![document]
    } else {
        let (_, name) = parent_and_name(pointer);
        parents
            .iter()
            .filter_map(|p| {
                p.get("properties").and_then(|m| m.get(&name)).or_else(|| {
                    let index = name.parse::<usize>().ok()?;
                    ["prefixItems", "items"]
                        .into_iter()
                        .find_map(|k| p.get(k).filter(|t| t.is_array()))
                        .and_then(|t| t.get(index))
                        .or_else(|| p.get("items").filter(|i| i.is_object()))
                })
            })
            .collect()
    };
    let mut conj: Vec<&'s Value> = Vec::new();
    let mut todo: Vec<&'s Value> = own;
    while let Some(s) = todo.pop() {
        if conj.len() > MAX_IN_PLACE || conj.iter().any(|c| std::ptr::eq(*c, s)) {
            continue;
        }
        conj.push(s);
        todo.extend(resolve(document, s));
        for b in s
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            todo.push(b);
        }
        for key in ["anyOf", "oneOf"] {
            for b in s.get(key).and_then(Value::as_array).into_iter().flatten() {
                alternatives.insert(b as *const Value);
            }
        }
    }
    // A location reached only through the branches of a parent's alternatives (the
    // envelope's `oneOf` of success and failure) keeps what `schema_at` found there.
    if conj.is_empty() {
        return all
            .into_iter()
            .filter(|s| !alternatives.contains(&(*s as *const Value)))
            .collect();
    }
    conj
}

/// Whether a member `name` is required by the subschemas of its parent.
pub(super) fn required(schemas: &[&Value], name: &str) -> bool {
    schemas.iter().any(|s| {
        s.get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)))
    })
}

/// The structural differences between two schema documents, by instance location;
/// `agent` are the agent fields (JSON pointers), for the agent-visible class.
pub fn diff(old: &Value, new: &Value, agent: &[String]) -> Vec<Change> {
    diff_view(old, new, &View::fields(agent.to_vec()))
}

/// [`diff`] with the whole view: agent fields, forwarded failure codes, direction.
pub(crate) fn diff_view(old: &Value, new: &Value, view: &View) -> Vec<Change> {
    let (old_at, new_at) = (locations(old), locations(new));
    let mut changes = Vec::new();
    let mut push = |class, kind, pointer: &str, detail: String, focus| {
        changes.push(Change {
            class,
            kind,
            pointer: pointer.to_owned(),
            detail,
            evidence: Evidence::Structural,
            witness: None,
            focus,
        });
    };
    let widened = |pointer: &str| view.loosened(pointer);
    for pointer in new_at.union(&old_at) {
        let (parent, name) = parent_and_name(pointer);
        let (old_parent, new_parent) = (schema_at(old, parent), schema_at(new, parent));
        // A member of a parent the old version did not describe comes with its parent.
        let parent_existed = pointer.is_empty() || old_at.contains(parent);
        match (old_at.contains(pointer), new_at.contains(pointer)) {
            (false, true) if !parent_existed => {}
            (false, true) => {
                if required(&new_parent, &name) {
                    push(
                        Class::Breaking,
                        "new_required_member",
                        pointer,
                        format!("{name:?} is required now"),
                        Focus::Location,
                    );
                } else if !closed(&old_parent) {
                    // The old version let any value through here; now only some pass.
                    push(
                        Class::Breaking,
                        "member_constrained",
                        pointer,
                        format!("{name:?} of an open object is constrained now"),
                        Focus::Location,
                    );
                } else {
                    push(
                        widened(pointer),
                        "new_optional_member",
                        pointer,
                        format!("{name:?} may appear now{}", view.why(pointer)),
                        Focus::Location,
                    );
                }
            }
            (true, false) => {
                if closed(&new_parent) {
                    push(
                        Class::Breaking,
                        "removed_member",
                        pointer,
                        format!("{name:?} is rejected now (closed object)"),
                        Focus::Location,
                    );
                } else {
                    push(
                        widened(pointer),
                        "removed_member",
                        pointer,
                        format!(
                            "{name:?} is no longer described: any value passes{}",
                            view.why(pointer)
                        ),
                        Focus::Location,
                    );
                }
            }
            (true, true) => {
                if !pointer.is_empty() {
                    if !required(&old_parent, &name) && required(&new_parent, &name) {
                        push(
                            Class::Breaking,
                            "new_required_member",
                            pointer,
                            format!("{name:?} was optional, is required now"),
                            Focus::Location,
                        );
                    } else if required(&old_parent, &name) && !required(&new_parent, &name) {
                        // The agent can now receive the value without this member.
                        push(
                            widened(pointer),
                            "member_optional",
                            pointer,
                            format!("{name:?} is optional now{}", view.why(pointer)),
                            Focus::Location,
                        );
                    }
                }
                let (o, n) = (conjunction(old, pointer), conjunction(new, pointer));
                if !lifted(old, new, &o, &n, pointer, view, &mut push) {
                    compare(&o, &n, pointer, view, &mut push);
                    branches(old, new, &o, &n, pointer, view, &mut push);
                }
            }
            (false, false) => {}
        }
    }
    changes
}

/// The branch a structural change names (for witnesses drawn from it): the `anyOf`/
/// `oneOf`/`allOf` branch added or removed.
pub(crate) fn branch_of(change: &Change) -> Option<&Value> {
    match &change.focus {
        Focus::Branch(branch) => Some(branch),
        _ => None,
    }
}
