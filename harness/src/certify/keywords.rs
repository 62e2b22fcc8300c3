//! What changed at one instance location, keyword by keyword: types, `enum`/`const`,
//! string keywords, closure, limits, the other validation keywords, `patternProperties`,
//! and composition branch by branch. `structural.rs` walks the locations.

use serde_json::{Map, Value};
use std::collections::BTreeSet;

use super::subschemas::{closed, keyword, normal, ANNOTATIONS};
use super::values::{named, ValueSet};
use super::{Class, Focus, View};

pub(super) type Push<'a> = dyn FnMut(Class, &'static str, &str, String, Focus) + 'a;

/// Validation keywords without a finer rule, and the type they apply to (`None`: any):
/// a difference is reported as undecided until a witness says which way it goes.
const OTHER_KEYWORDS: &[(&str, Option<&str>)] = &[
    ("multipleOf", Some("number")),
    ("uniqueItems", Some("array")),
    ("contains", Some("array")),
    ("minContains", Some("array")),
    ("maxContains", Some("array")),
    ("unevaluatedItems", Some("array")),
    ("propertyNames", Some("object")),
    ("patternProperties", Some("object")),
    ("dependentRequired", Some("object")),
    ("dependentSchemas", Some("object")),
    ("dependencies", Some("object")),
    ("not", None),
    ("if", None),
    ("then", None),
    ("else", None),
];

const EVERY_TYPE: [&str; 7] = [
    "null", "boolean", "integer", "number", "string", "array", "object",
];

fn types(s: &[&Value]) -> BTreeSet<String> {
    let mut out: Option<BTreeSet<String>> = None;
    for schema in s {
        let set: BTreeSet<String> = match schema.get("type") {
            Some(Value::String(t)) => [t.clone()].into(),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => continue,
        };
        // In place, every `type` applies: the admitted types are their intersection.
        out = Some(match out {
            None => set,
            Some(prev) => prev
                .into_iter()
                .filter(|t| set.contains(t) || (t == "integer" && set.contains("number")))
                .collect(),
        });
    }
    out.unwrap_or_default()
}

/// No `type` admits every type; `integer` is inside `number`.
fn admits(set: &BTreeSet<String>, t: &str) -> bool {
    set.is_empty() || set.contains(t) || (t == "integer" && set.contains("number"))
}

/// Keyword-level differences at one location, each compared only when both versions
/// admit the type it applies to.
pub(super) fn compare(o: &[&Value], n: &[&Value], pointer: &str, view: &View, push: &mut Push<'_>) {
    let at = Location {
        o,
        n,
        pointer,
        view,
        loosened: view.loosened(pointer),
        ot: types(o),
        nt: types(n),
    };
    type_changes(&at, push);
    enum_changes(&at, push);
    string_keyword_changes(&at, push);
    if at.both("object") {
        closure_changes(&at, push);
    }
    limit_changes(&at, push);
    other_keyword_changes(&at, push);
}

/// One location compared: both versions' subschemas there, their types, and how a
/// loosening there is classed.
struct Location<'a, 'v> {
    o: &'a [&'v Value],
    n: &'a [&'v Value],
    pointer: &'a str,
    view: &'a View,
    loosened: Class,
    ot: BTreeSet<String>,
    nt: BTreeSet<String>,
}

impl Location<'_, '_> {
    /// Whether both versions admit type `t` (the numeric keywords, `multipleOf` and
    /// limits, apply to `integer` as to `number`).
    fn both(&self, t: &str) -> bool {
        let admitted =
            |set: &BTreeSet<String>| admits(set, t) || (t == "number" && admits(set, "integer"));
        admitted(&self.ot) && admitted(&self.nt)
    }
}

/// A keyword's value as a detail shows it.
fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "(none)".to_owned(), Value::to_string)
}

/// `type`: a type lost is breaking, one gained is a loosening (both may hold).
fn type_changes(at: &Location<'_, '_>, push: &mut Push<'_>) {
    let (ot, nt, pointer) = (&at.ot, &at.nt, at.pointer);
    if ot != nt {
        let lost = EVERY_TYPE.iter().any(|t| admits(ot, t) && !admits(nt, t));
        let gained = EVERY_TYPE.iter().any(|t| !admits(ot, t) && admits(nt, t));
        let detail = format!("type {ot:?} → {nt:?}");
        if lost {
            push(
                Class::Breaking,
                "type_changed",
                pointer,
                detail.clone(),
                Focus::Location,
            );
        }
        if gained {
            push(
                at.loosened,
                "type_widened",
                pointer,
                format!("{detail}{}", at.view.why(pointer)),
                Focus::Location,
            );
        }
    }
}

/// `enum`: values removed or newly set narrow, values added or the keyword removed widen.
fn enum_changes(at: &Location<'_, '_>, push: &mut Push<'_>) {
    let (pointer, view) = (at.pointer, at.view);
    let values = |s: &[&Value]| keyword(s, "enum").and_then(Value::as_array).cloned();
    match (values(at.o), values(at.n)) {
        (Some(ov), Some(nv)) if ov != nv => {
            let (os, ns): (ValueSet, ValueSet) = (ov.iter().collect(), nv.iter().collect());
            let removed: Vec<Value> = ov.iter().filter(|v| !ns.contains(v)).cloned().collect();
            let added: Vec<Value> = nv.iter().filter(|v| !os.contains(v)).cloned().collect();
            if !removed.is_empty() {
                push(
                    Class::Breaking,
                    "enum_narrowed",
                    pointer,
                    format!("no longer allowed: {}", named(&removed)),
                    Focus::Keyword("enum"),
                );
            }
            if !added.is_empty() {
                let (class, kind, why) = view.new_values(pointer, &added);
                push(
                    class,
                    kind,
                    pointer,
                    format!("newly allowed: {}{why}", named(&added)),
                    Focus::Keyword("enum"),
                );
            }
        }
        (None, Some(nv)) => push(
            Class::Breaking,
            "enum_narrowed",
            pointer,
            format!("only {} allowed now", named(&nv)),
            Focus::Keyword("enum"),
        ),
        (Some(ov), None) => push(
            at.loosened,
            "enum_widened",
            pointer,
            format!("no longer only {}{}", named(&ov), view.why(pointer)),
            Focus::Keyword("enum"),
        ),
        _ => {}
    }
}

/// `const`, `pattern`, `format`: removed loosens; a pattern is compared as a language
/// (one matching all the old one matched only widens); any other change is breaking.
fn string_keyword_changes(at: &Location<'_, '_>, push: &mut Push<'_>) {
    let (pointer, view, loosened) = (at.pointer, at.view, at.loosened);
    for (word, kind, applies) in [
        ("const", "const_changed", None),
        ("pattern", "pattern_changed", Some("string")),
        ("format", "format_changed", Some("string")),
    ] {
        if applies.is_some_and(|t| !at.both(t)) {
            continue;
        }
        let (a, b) = (keyword(at.o, word), keyword(at.n, word));
        let detail = format!("{word} {} → {}", show(a), show(b));
        match (a, b) {
            (a, b) if a == b => {}
            (Some(_), None) => push(
                loosened,
                "constraint_removed",
                pointer,
                detail,
                Focus::Keyword(word),
            ),
            // A changed pattern may both narrow and widen: compared as languages, one
            // that matches every string the old one matched only widens; otherwise the
            // witnesses say which (strings only one pattern matches are among their
            // candidates).
            (Some(Value::String(a)), Some(Value::String(b))) if word == "pattern" => {
                use super::pattern::{only_in, Only};
                match (only_in(a, b), only_in(b, a)) {
                    (Only::Nothing, Only::Nothing) => {}
                    (Only::Nothing, _) => push(
                        loosened,
                        kind,
                        pointer,
                        format!(
                            "{detail} (every string the old pattern matches, the new one matches){}",
                            view.why(pointer)
                        ), Focus::Keyword(word),
                    ),
                    _ => push(Class::Unknown, kind, pointer, detail, Focus::Keyword(word)),
                }
            }
            _ => push(Class::Breaking, kind, pointer, detail, Focus::Keyword(word)),
        }
    }
}

/// An object closed (breaking) or opened (a loosening only where new members reach the
/// agent).
fn closure_changes(at: &Location<'_, '_>, push: &mut Push<'_>) {
    let (pointer, view) = (at.pointer, at.view);
    match (closed(at.o), closed(at.n)) {
        (false, true) => push(
            Class::Breaking,
            "object_closed",
            pointer,
            "members not listed are rejected now".into(),
            Focus::Location,
        ),
        (true, false) => {
            // New members of an ancestor of the agent fields never reach the agent.
            let (class, why) = if view.reaches(pointer) {
                (at.loosened, view.why(pointer))
            } else if view.direction == super::Direction::Request {
                (Class::Compatible, view.why(pointer))
            } else {
                (Class::Compatible, " (outside the agent fields: the guard never hands new members here to the agent)")
            };
            push(
                class,
                "object_opened",
                pointer,
                format!("members not listed are admitted now{why}"),
                Focus::Location,
            );
        }
        _ => {}
    }
}

/// Upper limits: lower or newly set is tighter. Lower limits: the reverse.
fn limit_changes(at: &Location<'_, '_>, push: &mut Push<'_>) {
    let pointer = at.pointer;
    for (word, upper, applies) in [
        ("maxLength", true, "string"),
        ("maxItems", true, "array"),
        ("maximum", true, "number"),
        ("exclusiveMaximum", true, "number"),
        ("maxProperties", true, "object"),
        ("minLength", false, "string"),
        ("minItems", false, "array"),
        ("minimum", false, "number"),
        ("exclusiveMinimum", false, "number"),
        ("minProperties", false, "object"),
    ] {
        if !at.both(applies) {
            continue;
        }
        let (a, b) = (
            keyword(at.o, word).and_then(Value::as_f64),
            keyword(at.n, word).and_then(Value::as_f64),
        );
        let tighter = match (a, b) {
            (None, None) => continue,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (Some(a), Some(b)) if a == b => continue,
            (Some(a), Some(b)) => (b < a) == upper,
        };
        let show = |v: Option<f64>| v.map_or_else(|| "(none)".to_owned(), |v| v.to_string());
        let detail = format!("{word} {} → {}", show(a), show(b));
        if tighter {
            push(
                Class::Breaking,
                "limit_tightened",
                pointer,
                detail,
                Focus::Keyword(word),
            );
        } else {
            push(
                at.loosened,
                "limit_loosened",
                pointer,
                format!("{detail}{}", at.view.why(pointer)),
                Focus::Keyword(word),
            );
        }
    }
}

/// The other keywords: which way a change goes where the numbers or the patterns say
/// (`multipleOf`, `patternProperties`), else left to the witnesses.
fn other_keyword_changes(at: &Location<'_, '_>, push: &mut Push<'_>) {
    let (o, n, pointer, view, loosened) = (at.o, at.n, at.pointer, at.view, at.loosened);
    for (word, applies) in OTHER_KEYWORDS {
        if applies.is_some_and(|t| !at.both(t)) {
            continue;
        }
        let (a, b) = (keyword(o, word), keyword(n, word));
        if a == b {
            continue;
        }
        let detail = format!("{word} {} → {}", show(a), show(b));
        let (narrows, widens) = match *word {
            "multipleOf" => multiple_of(a, b),
            "patternProperties" => pattern_properties(o, n, a, b),
            _ => (None, None),
        };
        match (narrows, widens) {
            (Some(true), Some(false)) => push(
                Class::Breaking,
                "keyword_changed",
                pointer,
                detail,
                Focus::Keyword(word),
            ),
            (Some(false), Some(true)) => push(
                loosened,
                "keyword_changed",
                pointer,
                format!("{detail}{}", view.why(pointer)),
                Focus::Keyword(word),
            ),
            (Some(true), Some(true)) => {
                push(
                    Class::Breaking,
                    "keyword_changed",
                    pointer,
                    detail.clone(),
                    Focus::Keyword(word),
                );
                push(
                    loosened,
                    "keyword_changed",
                    pointer,
                    format!("{detail}{}", view.why(pointer)),
                    Focus::Keyword(word),
                );
            }
            // Which way it goes is left to the witnesses (and to the algebra).
            _ => push(
                Class::Unknown,
                "keyword_changed",
                pointer,
                detail,
                Focus::Keyword(word),
            ),
        }
    }
}

/// Whether a `multipleOf` change narrows and whether it widens, when the numbers say:
/// a multiple of the old divisor (or a divisor newly set) narrows, a divisor of it (or one
/// removed) widens; otherwise both may hold (`None`).
fn multiple_of(a: Option<&Value>, b: Option<&Value>) -> (Option<bool>, Option<bool>) {
    let whole = |x: f64| x.is_finite() && (x - x.round()).abs() < 1e-9;
    match (a.and_then(Value::as_f64), b.and_then(Value::as_f64)) {
        (None, Some(_)) => (Some(true), Some(false)),
        (Some(_), None) => (Some(false), Some(true)),
        (Some(a), Some(b)) if a > 0.0 && b > 0.0 && whole(b / a) => (Some(true), Some(false)),
        (Some(a), Some(b)) if a > 0.0 && b > 0.0 && whole(a / b) => (Some(false), Some(true)),
        _ => (None, None),
    }
}

/// Whether a `patternProperties` change narrows and whether it widens, when only whole
/// patterns were added or removed and `additionalProperties` settles what their names meet
/// instead: removed from a closed object (or added to an open one) narrows, removed from
/// an open object (or added to a closed one) widens. A pattern whose subschema changed, or
/// an `additionalProperties` schema, leaves it to the witnesses (`None`).
fn pattern_properties(
    o: &[&Value],
    n: &[&Value],
    a: Option<&Value>,
    b: Option<&Value>,
) -> (Option<bool>, Option<bool>) {
    let empty = Map::new();
    let (a, b) = (
        a.and_then(Value::as_object).unwrap_or(&empty),
        b.and_then(Value::as_object).unwrap_or(&empty),
    );
    if a.iter().any(|(k, v)| b.get(k).is_some_and(|w| w != v)) {
        return (None, None);
    }
    // What names no pattern matches meet: closed, open, or a schema (undecided).
    let rest = |s: &[&Value]| -> Option<bool> {
        if closed(s) {
            return Some(true);
        }
        match keyword(s, "additionalProperties") {
            None | Some(Value::Bool(true)) => Some(false),
            Some(_) => None,
        }
    };
    let (removed, added) = (
        a.keys().any(|k| !b.contains_key(k)),
        b.keys().any(|k| !a.contains_key(k)),
    );
    let (old_closed, new_closed) = (rest(o), rest(n));
    let mut narrows = false;
    let mut widens = false;
    if removed {
        match new_closed {
            Some(true) => narrows = true,
            Some(false) => widens = true,
            None => return (None, None),
        }
    }
    if added {
        match old_closed {
            Some(true) => widens = true,
            Some(false) => narrows = true,
            None => return (None, None),
        }
    }
    (Some(narrows), Some(widens))
}

/// The `anyOf`/`oneOf`/`allOf` written at a location, compared branch by branch: a
/// branch is matched by its text (`$ref`s followed, annotations dropped); a removed
/// alternative narrows, an added one widens (the reverse for `allOf`). When exactly one
/// branch differs on each side and both have the same type, their keywords are compared.
pub(super) fn branches(
    old: &Value,
    new: &Value,
    o: &[&Value],
    n: &[&Value],
    pointer: &str,
    view: &View,
    push: &mut Push<'_>,
) {
    for key in ["anyOf", "oneOf", "allOf"] {
        let list = |document: &Value, s: &[&Value]| -> Vec<Value> {
            s.iter()
                .filter_map(|s| s.get(key).and_then(Value::as_array))
                .flatten()
                .map(|b| normal(document, b, 0))
                .collect()
        };
        let (ob, nb) = (list(old, o), list(new, n));
        if ob == nb {
            continue;
        }
        let removed: Vec<&Value> = ob.iter().filter(|b| !nb.contains(b)).collect();
        let added: Vec<&Value> = nb.iter().filter(|b| !ob.contains(b)).collect();
        if let ([r], [a]) = (removed.as_slice(), added.as_slice()) {
            let same_type = r.get("type").is_some() && r.get("type") == a.get("type");
            if same_type {
                compare(&[r], &[a], pointer, view, push);
                continue;
            }
        }
        // An alternative removed narrows, one added widens; for `allOf` the reverse.
        let (narrows, widens) = (Class::Breaking, view.loosened(pointer));
        let (on_removed, on_added) = if key == "allOf" {
            (widens, narrows)
        } else {
            (narrows, widens)
        };
        for b in &removed {
            push(
                on_removed,
                "branch_removed",
                pointer,
                format!("{key} branch {b} removed"),
                Focus::Branch((*b).clone()),
            );
        }
        for b in &added {
            push(
                on_added,
                "branch_added",
                pointer,
                format!("{key} branch {b} added{}", view.why(pointer)),
                Focus::Branch((*b).clone()),
            );
        }
        // (The same branches in another order admit the same values: nothing to say.)
    }
}

/// A plain schema on one side, alternatives (`anyOf`, and nothing but annotations beside it)
/// on the other: the plain schema is read as the one alternative it was, so
/// `string` → `anyOf[string, null]` is one branch added, not a `maxLength` lost beside a
/// branch "added" that was there all along. `true` when it said what changed.
pub(super) fn lifted(
    old: &Value,
    new: &Value,
    o: &[&Value],
    n: &[&Value],
    pointer: &str,
    view: &View,
    push: &mut Push<'_>,
) -> bool {
    // `anyOf` only (an added `oneOf` branch that overlaps another narrows), and nothing
    // but annotations beside it (a `maximum` there constrains every branch).
    let alternatives = |s: &[&Value]| -> Option<(&'static str, Vec<Value>)> {
        let [node] = s else { return None };
        let object = node.as_object()?;
        let alone = object
            .keys()
            .all(|k| k == "anyOf" || ANNOTATIONS.contains(&k.as_str()));
        if !alone {
            return None;
        }
        node.get("anyOf")
            .and_then(Value::as_array)
            .map(|branches| ("anyOf", branches.clone()))
    };
    fn plain<'s>(s: &[&'s Value]) -> Option<&'s Value> {
        match s {
            [node] if node.get("anyOf").is_none() && node.get("oneOf").is_none() => Some(*node),
            _ => None,
        }
    }
    // (the plain schema, its document, the alternatives, theirs, whether the plain is old)
    let (single, single_doc, (key, branches), branches_doc, plain_is_old) =
        match (plain(o), alternatives(n), plain(n), alternatives(o)) {
            (Some(p), Some(a), _, _) => (p, old, a, new, true),
            (_, _, Some(p), Some(a)) => (p, new, a, old, false),
            _ => return false,
        };
    let single_normal = normal(single_doc, single, 0);
    let normals: Vec<Value> = branches
        .iter()
        .map(|b| normal(branches_doc, b, 0))
        .collect();
    let kept = normals
        .iter()
        .position(|b| *b == single_normal)
        .or_else(|| {
            // The one branch of the plain schema's type: compared keyword by keyword.
            let same: Vec<usize> = (0..normals.len())
                .filter(|i| {
                    single_normal.get("type").is_some()
                        && normals[*i].get("type") == single_normal.get("type")
                })
                .collect();
            let [i] = same.as_slice() else { return None };
            let (a, b) = (&single_normal, &normals[*i]);
            if plain_is_old {
                compare(&[a], &[b], pointer, view, push);
            } else {
                compare(&[b], &[a], pointer, view, push);
            }
            Some(*i)
        });
    let Some(kept) = kept else {
        return false;
    };
    for (_, b) in normals.iter().enumerate().filter(|(i, _)| *i != kept) {
        if plain_is_old {
            push(
                view.loosened(pointer),
                "branch_added",
                pointer,
                format!("{key} branch {b} added{}", view.why(pointer)),
                Focus::Branch(b.clone()),
            );
        } else {
            push(
                Class::Breaking,
                "branch_removed",
                pointer,
                format!("{key} branch {b} removed"),
                Focus::Branch(b.clone()),
            );
        }
    }
    true
}
