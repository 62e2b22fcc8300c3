//! `airlock certify`: what changes between two schema versions of a contract, each change
//! classified and confirmed by a *witness* (an instance valid under one version and not
//! the other), every fixture replayed under both, and a certificate carrying both
//! schemas' SHA-256.
//!
//! Classes (DESIGN.md): **breaking** — a new required member, a narrowed enum, a changed
//! type, a tightened limit, a removed member of a closed object, a changed const or
//! pattern or format; **agent-visible** — a new optional member under `/data`, a widened
//! enum, a loosened limit; **compatible** — anything else.

use airlock_guard::{Contract, Guard};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use crate::adversary::schema_at;
use crate::check::CheckError;
use crate::corpus::find_corpus;

/// How a change affects those who depend on the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Responses valid before are rejected now (or the agent sees other shapes).
    Breaking,
    /// The agent may see values or members it never saw.
    AgentVisible,
    /// Neither.
    Compatible,
}

impl Class {
    /// The class's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Breaking => "breaking",
            Class::AgentVisible => "agent_visible",
            Class::Compatible => "compatible",
        }
    }
}

/// An instance that only one of the two versions accepts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Witness {
    /// `old_only` or `new_only`: which version accepts it.
    pub accepted_by: &'static str,
    /// The instance.
    pub instance: Value,
    /// Whether the edit at the change's location is what flips a verdict (relative to
    /// the fixture it was made from); when false, other changes may share the credit.
    pub isolated: bool,
}

/// One change between the versions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Its class.
    pub class: Class,
    /// What changed (`new_required_member`, `enum_widened`, `limit_tightened`, …).
    pub kind: &'static str,
    /// The instance location (a JSON pointer into responses).
    pub pointer: String,
    /// Details, for the reviewer.
    pub detail: String,
    /// An instance confirming the change, when one was found.
    pub witness: Option<Witness>,
}

/// A fixture's verdict under both versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Replay {
    /// The fixture, relative to the corpus folder.
    pub fixture: String,
    /// Admitted under the old version.
    pub old: bool,
    /// Admitted under the new version.
    pub new: bool,
}

/// The certificate of a version change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Certificate {
    /// The contract's tool.
    pub tool: String,
    /// `{version, sha256}` of the old schema.
    pub from: Value,
    /// `{version, sha256}` of the new schema.
    pub to: Value,
    /// The strongest class among the changes (`compatible` when there are none).
    pub verdict: Class,
    /// Every change found.
    pub changes: Vec<Change>,
    /// Every fixture under both versions.
    pub fixtures: Vec<Replay>,
}

/// Compare versions `from` and `to` of the contract in `dir`.
///
/// # Errors
///
/// When either version or the corpus cannot be loaded.
pub fn certify(dir: &Path, from: u32, to: u32) -> Result<Certificate, CheckError> {
    let load = |version: u32| {
        Contract::load_version(dir, version).map_err(|source| CheckError::Contract {
            dir: dir.to_path_buf(),
            source,
        })
    };
    let (old, new) = (load(from)?, load(to)?);
    let corpus = find_corpus(&new, None).map_err(|source| CheckError::Corpus {
        dir: dir.to_path_buf(),
        source,
    })?;
    let bases: Vec<Value> = corpus
        .fixtures
        .iter()
        .filter_map(|f| serde_json::from_slice(&f.bytes).ok())
        .collect();
    let agent: Vec<String> = new
        .agent_fields()
        .iter()
        .map(|f| f.as_str().to_owned())
        .collect();
    let mut changes = diff(old.schema().document(), new.schema().document(), &agent);
    for change in &mut changes {
        change.witness = witness(&old, &new, change, &bases);
    }
    let (old_guard, new_guard) = (Guard::new(old.clone()), Guard::new(new.clone()));
    let fixtures: Vec<Replay> = corpus
        .fixtures
        .iter()
        .map(|f| Replay {
            fixture: f
                .path
                .strip_prefix(&corpus.dir)
                .unwrap_or(&f.path)
                .to_string_lossy()
                .into_owned(),
            old: old_guard.admit(&f.request, &f.bytes).is_admitted(),
            new: new_guard.admit(&f.request, &f.bytes).is_admitted(),
        })
        .collect();
    // A fixture the new version rejects and the old admitted is a breaking change whatever
    // the structural diff found; one newly admitted is at least agent-visible.
    let replayed = fixtures
        .iter()
        .filter_map(|f: &Replay| match (f.old, f.new) {
            (true, false) => Some(Class::Breaking),
            (false, true) => Some(Class::AgentVisible),
            _ => None,
        });
    let verdict = changes
        .iter()
        .map(|c| c.class)
        .chain(replayed)
        .min()
        .unwrap_or(Class::Compatible);
    Ok(Certificate {
        tool: new.tool().to_owned(),
        from: json!({"version": from, "sha256": old.schema().sha256()}),
        to: json!({"version": to, "sha256": new.schema().sha256()}),
        verdict,
        changes,
        fixtures,
    })
}

/// At most this many locations are compared (a recursive schema describes endless ones).
const MAX_LOCATIONS: usize = 4096;
/// And at most this deep.
const MAX_LOCATION_DEPTH: usize = 8;

/// Every instance location the schema describes, through `properties`, `items`,
/// `prefixItems` (or an `items` tuple and `additionalItems`), local `$ref`s and
/// composition (bounded in count and depth).
fn locations(document: &Value) -> BTreeSet<String> {
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

/// The first value of `keyword` among the subschemas at a location.
fn keyword<'s>(schemas: &[&'s Value], keyword: &str) -> Option<&'s Value> {
    schemas.iter().find_map(|s| s.get(keyword))
}

/// Whether a member `name` is required by the subschemas of its parent.
fn required(schemas: &[&Value], name: &str) -> bool {
    schemas.iter().any(|s| {
        s.get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)))
    })
}

fn closed(schemas: &[&Value]) -> bool {
    schemas.iter().any(|s| {
        s.get("additionalProperties") == Some(&Value::Bool(false))
            || s.get("unevaluatedProperties") == Some(&Value::Bool(false))
    })
}

fn parent_and_name(pointer: &str) -> (&str, String) {
    let (parent, name) = pointer.rsplit_once('/').unwrap_or(("", pointer));
    (parent, name.replace("~1", "/").replace("~0", "~"))
}

/// Whether a location reaches the agent: it is, or lies inside, one of the agent fields.
fn visible(agent: &[String], pointer: &str) -> bool {
    agent
        .iter()
        .any(|f| pointer == f || pointer.starts_with(&format!("{f}/")))
}

/// The structural differences between two schema documents, by instance location;
/// `agent` are the contract's agent fields (JSON pointers), for the agent-visible class.
pub fn diff(old: &Value, new: &Value, agent: &[String]) -> Vec<Change> {
    let (old_at, new_at) = (locations(old), locations(new));
    let mut changes = Vec::new();
    let mut push = |class, kind, pointer: &str, detail: String| {
        changes.push(Change {
            class,
            kind,
            pointer: pointer.to_owned(),
            detail,
            witness: None,
        });
    };
    let widened = |pointer: &str| {
        if visible(agent, pointer) {
            Class::AgentVisible
        } else {
            Class::Compatible
        }
    };
    for pointer in new_at.union(&old_at) {
        let (parent, name) = parent_and_name(pointer);
        let (o, n) = (schema_at(old, pointer), schema_at(new, pointer));
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
                    );
                } else if !closed(&old_parent) {
                    // The old version let any value through here; now only some pass.
                    push(
                        Class::Breaking,
                        "member_constrained",
                        pointer,
                        format!("{name:?} of an open object is constrained now"),
                    );
                } else {
                    push(
                        widened(pointer),
                        "new_optional_member",
                        pointer,
                        format!("{name:?} may appear now"),
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
                    );
                } else {
                    push(
                        widened(pointer),
                        "removed_member",
                        pointer,
                        format!("{name:?} is no longer described: any value passes"),
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
                        );
                    } else if required(&old_parent, &name) && !required(&new_parent, &name) {
                        push(
                            Class::Compatible,
                            "member_optional",
                            pointer,
                            format!("{name:?} is optional now"),
                        );
                    }
                }
                compare(&o, &n, pointer, widened(pointer), &mut push);
            }
            (false, false) => {}
        }
    }
    changes
}

type Push<'a> = dyn FnMut(Class, &'static str, &str, String) + 'a;

/// Validation keywords without a finer rule: any difference is reported as breaking
/// (conservatively: it may also loosen).
const OTHER_KEYWORDS: &[&str] = &[
    "multipleOf",
    "uniqueItems",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "propertyNames",
    "contains",
    "minContains",
    "maxContains",
    "patternProperties",
];

/// Keyword-level differences at one location; `loosened` is the class of a change that
/// only admits more (agent-visible where the agent sees it).
fn compare(o: &[&Value], n: &[&Value], pointer: &str, loosened: Class, push: &mut Push<'_>) {
    let show = |v: Option<&Value>| v.map_or_else(|| "(none)".to_owned(), Value::to_string);
    let types = |s: &[&Value]| -> BTreeSet<String> {
        match keyword(s, "type") {
            Some(Value::String(t)) => [t.clone()].into(),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => BTreeSet::new(),
        }
    };
    // No `type` admits every type; `integer` is inside `number`.
    let admits = |set: &BTreeSet<String>, t: &str| {
        set.is_empty() || set.contains(t) || (t == "integer" && set.contains("number"))
    };
    let (ot, nt) = (types(o), types(n));
    if ot != nt {
        let every = [
            "null", "boolean", "integer", "number", "string", "array", "object",
        ];
        let lost = every.iter().any(|t| admits(&ot, t) && !admits(&nt, t));
        let gained = every.iter().any(|t| !admits(&ot, t) && admits(&nt, t));
        let detail = format!("type {ot:?} → {nt:?}");
        if lost {
            push(Class::Breaking, "type_changed", pointer, detail);
        } else if gained {
            push(loosened, "type_widened", pointer, detail);
        }
    }
    let values = |s: &[&Value]| keyword(s, "enum").and_then(Value::as_array).cloned();
    match (values(o), values(n)) {
        (Some(ov), Some(nv)) if ov != nv => {
            let removed: Vec<Value> = ov.iter().filter(|v| !nv.contains(v)).cloned().collect();
            let added: Vec<Value> = nv.iter().filter(|v| !ov.contains(v)).cloned().collect();
            if !removed.is_empty() {
                push(
                    Class::Breaking,
                    "enum_narrowed",
                    pointer,
                    format!("no longer allowed: {}", Value::from(removed)),
                );
            }
            if !added.is_empty() {
                push(
                    loosened,
                    "enum_widened",
                    pointer,
                    format!("newly allowed: {}", Value::from(added)),
                );
            }
        }
        (None, Some(nv)) => push(
            Class::Breaking,
            "enum_narrowed",
            pointer,
            format!("only {} allowed now", Value::from(nv)),
        ),
        (Some(ov), None) => push(
            loosened,
            "enum_widened",
            pointer,
            format!("no longer only {}", Value::from(ov)),
        ),
        _ => {}
    }
    for (word, kind) in [
        ("const", "const_changed"),
        ("pattern", "pattern_changed"),
        ("format", "format_changed"),
    ] {
        let (a, b) = (keyword(o, word), keyword(n, word));
        let detail = format!("{word} {} → {}", show(a), show(b));
        match (a, b) {
            (a, b) if a == b => {}
            (Some(_), None) => push(loosened, "constraint_removed", pointer, detail),
            _ => push(Class::Breaking, kind, pointer, detail),
        }
    }
    let closes = |s: &[&Value]| closed(s);
    match (closes(o), closes(n)) {
        (false, true) => push(
            Class::Breaking,
            "object_closed",
            pointer,
            "members not listed are rejected now".into(),
        ),
        (true, false) => push(
            loosened,
            "object_opened",
            pointer,
            "members not listed are admitted now".into(),
        ),
        _ => {}
    }
    // Upper limits: lower or newly set is tighter. Lower limits: the reverse.
    for (word, upper) in [
        ("maxLength", true),
        ("maxItems", true),
        ("maximum", true),
        ("exclusiveMaximum", true),
        ("maxProperties", true),
        ("minLength", false),
        ("minItems", false),
        ("minimum", false),
        ("exclusiveMinimum", false),
        ("minProperties", false),
    ] {
        let (a, b) = (
            keyword(o, word).and_then(Value::as_f64),
            keyword(n, word).and_then(Value::as_f64),
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
            push(Class::Breaking, "limit_tightened", pointer, detail);
        } else {
            push(loosened, "limit_loosened", pointer, detail);
        }
    }
    for word in OTHER_KEYWORDS {
        let (a, b) = (keyword(o, word), keyword(n, word));
        if a != b {
            push(
                Class::Breaking,
                "keyword_changed",
                pointer,
                format!("{word} {} → {}", show(a), show(b)),
            );
        }
    }
}

/// The values a location's `enum` and `const` list.
fn listed(schemas: &[&Value]) -> Vec<Value> {
    let mut values: Vec<Value> = keyword(schemas, "enum")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    values.extend(keyword(schemas, "const").cloned());
    values
}

/// Candidate values for a location: values one version's `enum`/`const` allow and the
/// other's do not (plus one both allow), edges of the limits, one value of each type.
fn candidates(o: &[&Value], n: &[&Value]) -> Vec<Value> {
    let (os, ns) = (listed(o), listed(n));
    let mut out: Vec<Value> = os.iter().filter(|v| !ns.contains(v)).cloned().collect();
    out.extend(ns.iter().filter(|v| !os.contains(v)).cloned());
    out.extend(os.iter().find(|v| ns.contains(v)).cloned());
    for schemas in [o, n] {
        for word in ["maxLength", "minLength"] {
            if let Some(len) = keyword(schemas, word).and_then(Value::as_u64) {
                for l in [len.saturating_sub(1), len, len.saturating_add(1)] {
                    out.push(Value::String(
                        "x".repeat(usize::try_from(l.min(4096)).unwrap_or(0)),
                    ));
                }
            }
        }
        for word in ["maxItems", "minItems"] {
            if let Some(len) = keyword(schemas, word).and_then(Value::as_u64) {
                for l in [len.saturating_sub(1), len, len.saturating_add(1)] {
                    out.push(Value::Array(vec![
                        Value::Null;
                        usize::try_from(l.min(4096)).unwrap_or(0)
                    ]));
                }
            }
        }
        for word in ["maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum"] {
            if let Some(v) = keyword(schemas, word).and_then(Value::as_f64) {
                out.extend([v - 1.0, v, v + 1.0].into_iter().map(Value::from));
            }
        }
    }
    out.extend([
        Value::Null,
        json!(true),
        json!(0),
        json!(0.5),
        json!("x"),
        json!([]),
        json!({}),
    ]);
    out
}

/// Edits of a string a fixture holds: cut to and just past each length limit (its own
/// characters, so a pattern it matched still has a chance).
fn resized(text: &str, o: &[&Value], n: &[&Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for schemas in [o, n] {
        for word in ["maxLength", "minLength"] {
            let Some(len) = keyword(schemas, word).and_then(Value::as_u64) else {
                continue;
            };
            let len = usize::try_from(len.min(4096)).unwrap_or(0);
            for l in [len.saturating_sub(1), len, len + 1] {
                let mut chars: Vec<char> = text.chars().collect();
                let last = chars.last().copied().unwrap_or('x');
                chars.resize(l, last);
                out.push(Value::String(chars.into_iter().collect()));
            }
        }
    }
    out
}

fn set_at(value: &mut Value, pointer: &str, new: Option<Value>) -> bool {
    let (parent, name) = parent_and_name(pointer);
    let Some(Value::Object(map)) = value.pointer_mut(parent) else {
        return false;
    };
    match new {
        Some(v) => {
            map.insert(name, v);
        }
        None => {
            map.shift_remove(&name);
        }
    }
    true
}

/// An instance the two versions judge differently, in the direction the change's class
/// says (breaking: only the old version accepts it; agent-visible: only the new one),
/// built from the fixtures by setting or removing the member at the change's location.
/// Preferred: an isolated one (the edit itself flips a verdict) holding a value that
/// tells the versions apart.
fn witness(old: &Contract, new: &Contract, change: &Change, bases: &[Value]) -> Option<Witness> {
    let (o, n) = (
        schema_at(old.schema().document(), &change.pointer),
        schema_at(new.schema().document(), &change.pointer),
    );
    let shared: Vec<Option<Value>> = std::iter::once(None)
        .chain(candidates(&o, &n).into_iter().map(Some))
        .collect();
    let verdicts = |v: &Value| (old.schema().is_valid(v), new.schema().is_valid(v));
    let (os, ns) = (listed(&o), listed(&n));
    // A value one version's keywords allow and the other's do not.
    let telling = |v: &Option<Value>| v.as_ref().is_some_and(|v| os.contains(v) != ns.contains(v));
    let wanted = |a: bool| match change.class {
        Class::Breaking => a,
        Class::AgentVisible => !a,
        Class::Compatible => true,
    };
    let mut best: Option<(u8, Witness)> = None;
    for base in bases {
        let before = verdicts(base);
        let own = base
            .pointer(&change.pointer)
            .and_then(Value::as_str)
            .map(|text| resized(text, &o, &n))
            .unwrap_or_default();
        for edit in shared.iter().cloned().chain(own.into_iter().map(Some)) {
            let rank = if telling(&edit) { 1 } else { 2 };
            let mut instance = base.clone();
            if !set_at(&mut instance, &change.pointer, edit) {
                continue;
            }
            let (a, b) = verdicts(&instance);
            if a == b || !wanted(a) {
                continue;
            }
            let isolated = (a, b) != before;
            let found = Witness {
                accepted_by: if a { "old_only" } else { "new_only" },
                instance,
                isolated,
            };
            if isolated {
                return Some(found);
            }
            if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                best = Some((rank, found));
            }
        }
    }
    best.map(|(_, w)| w)
}

impl Certificate {
    /// The certificate as pretty JSON.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The certificate for a pull request or a review record.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# Certificate: `{}` v{} → v{}\n\n**Verdict: {}**\n\n| | version | schema SHA-256 |\n|---|---|---|\n| from | {} | `{}` |\n| to | {} | `{}` |\n",
            self.tool,
            self.from["version"],
            self.to["version"],
            self.verdict.as_str(),
            self.from["version"],
            self.from["sha256"].as_str().unwrap_or_default(),
            self.to["version"],
            self.to["sha256"].as_str().unwrap_or_default(),
        );
        let _ = writeln!(
            out,
            "## Changes\n\n| class | change | at | detail | witness |\n|---|---|---|---|---|"
        );
        for c in &self.changes {
            let witness = c.witness.as_ref().map_or_else(
                || "none found".to_owned(),
                |w| {
                    let isolated = if w.isolated { "" } else { " (not isolated)" };
                    format!("{}{isolated}: `{}`", w.accepted_by, w.instance)
                },
            );
            let _ = writeln!(
                out,
                "| {} | {} | `{}` | {} | {} |",
                c.class.as_str(),
                c.kind,
                c.pointer,
                c.detail.replace('|', "\\|"),
                witness.replace('|', "\\|")
            );
        }
        let _ = writeln!(
            out,
            "\n## Fixtures\n\n| fixture | old | new |\n|---|---|---|"
        );
        for f in &self.fixtures {
            let verdict = |admitted: bool| if admitted { "admit" } else { "reject" };
            let mark = if f.old == f.new { "" } else { " **changed**" };
            let _ = writeln!(
                out,
                "| `{}` | {} | {}{mark} |",
                f.fixture,
                verdict(f.old),
                verdict(f.new)
            );
        }
        out
    }
}
