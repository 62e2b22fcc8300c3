//! Witnesses: candidate instances (from the difference schemas, the fixtures, the
//! schemas' own values, edits of a base at a change's location) judged by the guard's
//! compiled schemas of both versions; an instance is a witness only when they disagree,
//! and a change's witness must exercise that change (its keyword swapped between the
//! versions flips the verdict, or the edit at its location does).

use airlock_guard::CompiledSchema;
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use super::values::{unique, ValueSet};
use super::*;

/// Bases kept for witness search (fixtures first, then examples and generated ones).
const MAX_BASES: usize = 48;
/// Verdict pairs computed for one structural change's witness search.
const MAX_TRIALS: usize = 2000;

/// Values judged in the search for structural witnesses, over all changes of one
/// certificate: the search is linear in the size of the documents, whatever the number of
/// changes (4 000 members changing type would otherwise cost 4 000 searches over 4 000
/// members each). Past it, a change keeps its structural evidence, with no witness.
const MAX_WITNESS_WORK: usize = 20_000_000;
/// What compiling a pair of probe schemas costs, per value of the documents, in values
/// judged.
const PROBE_COST: usize = 16;

/// A location whose bases were built, and whether from the old version.
type BuiltAt = (String, bool);

/// The guard's compiled schemas of both versions: the only judges of a witness.
pub(super) struct Judge<'a> {
    pub(super) old: &'a CompiledSchema,
    pub(super) new: &'a CompiledSchema,
    /// Values judged for structural witnesses so far, and how many may be.
    work: Cell<usize>,
    budget: usize,
    /// The bases lacking a location that got it built (per location and version),
    /// shared by every change under it.
    built: RefCell<HashMap<BuiltAt, Rc<Vec<Value>>>>,
}

impl<'a> Judge<'a> {
    pub(super) fn new(old: &'a CompiledSchema, new: &'a CompiledSchema) -> Self {
        Judge {
            old,
            new,
            work: Cell::new(0),
            budget: MAX_WITNESS_WORK,
            built: RefCell::new(HashMap::new()),
        }
    }
}

impl Judge<'_> {
    /// Spend `cost` values of the witness search; false once the search is spent (the
    /// last spending may pass the budget by its cost).
    fn spend(&self, cost: usize) -> bool {
        let spent = self.work.get();
        if spent >= self.budget {
            return false;
        }
        self.work.set(spent.saturating_add(cost));
        true
    }

    pub(super) fn verdicts(&self, v: &Value) -> (bool, bool) {
        (self.old.is_valid(v), self.new.is_valid(v))
    }

    /// The instances to edit: `given` first, then each version's examples and generated
    /// instances that one of the versions admits.
    /// The given ones (fixtures, near misses included: an edit that makes one admitted
    /// is isolated) are all kept, up to the bound; the others only when a version
    /// admits them.
    pub(super) fn bases(&self, given: Vec<Value>) -> Vec<Value> {
        let (od, nd) = (self.old.document(), self.new.document());
        let mut out: Vec<Value> = Vec::new();
        for v in given {
            if out.len() < MAX_BASES && !out.contains(&v) {
                out.push(v);
            }
        }
        let extra = generate::examples(od)
            .into_iter()
            .chain(generate::examples(nd))
            .chain(generate::candidates(od, od, 1))
            .chain(generate::candidates(nd, nd, 2));
        for v in extra {
            if out.len() >= MAX_BASES * 2 {
                break;
            }
            if !out.contains(&v) {
                let (a, b) = self.verdicts(&v);
                if a || b {
                    out.push(v);
                }
            }
        }
        out
    }

    /// Up to `limit` instances only one version admits (`old_only`: the old one).
    pub(super) fn separating(
        &self,
        pool: impl Iterator<Item = Value>,
        old_only: bool,
        limit: usize,
    ) -> Vec<Value> {
        let mut out = Vec::new();
        for v in pool.take(MAX_TRIALS) {
            if out.len() >= limit {
                break;
            }
            if self.verdicts(&v) == (old_only, !old_only) && !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }

    /// An instance the versions judge differently in the direction the change's class
    /// says (breaking: only the old version accepts it; a loosening: only the new one;
    /// undecided: either), made from a base by setting or removing the member at the
    /// change's location. Preferred: an isolated one (the edit itself flips a verdict)
    /// holding a value that tells the versions apart.
    pub(super) fn structural_witness(&self, change: &Change, bases: &[Value]) -> Option<Witness> {
        let (od, nd) = (self.old.document(), self.new.document());
        let (o, n) = (
            structural::conjunction(od, &change.pointer),
            structural::conjunction(nd, &change.pointer),
        );
        let edits = witness_edits((od, nd), change, (&o, &n));
        let (os, ns): (ValueSet, ValueSet) =
            (listed(&o).iter().collect(), listed(&n).iter().collect());
        let telling =
            |v: &Option<Value>| v.as_ref().is_some_and(|v| os.contains(v) != ns.contains(v));
        let wanted = |old_admits: bool| match change.class {
            Class::Breaking => old_admits,
            Class::AgentVisible | Class::Compatible => !old_admits,
            Class::Unknown => true,
        };
        let mut best: Option<(u8, Witness)> = None;
        let mut trials = 0;
        // Each version with only this change's keyword taken from the other (built on the
        // first instance that separates the versions): a witness must be judged by one of
        // them as the other version judges it, so that the keyword — not a change
        // elsewhere — separates the versions.
        let mut probe: Option<Option<(CompiledSchema, CompiledSchema)>> = None;
        // Bases lacking the change's parent get it built, from the version that should
        // accept the witness.
        let (parent, _) = crate::base::pointer::parent_and_name(&change.pointer);
        let side = if change.class == Class::Breaking {
            od
        } else {
            nd
        };
        let built = self.built(bases, parent, side, change.class == Class::Breaking);
        for base in bases
            .iter()
            .filter(|b| b.pointer(parent).is_some())
            .chain(built.iter())
        {
            // Each trial judges (and copies) about the base's values.
            let cost = values_in(base);
            if !self.spend(cost) {
                return best.map(|(_, w)| w);
            }
            let before = self.verdicts(base);
            let own = base
                .pointer(&change.pointer)
                .and_then(Value::as_str)
                .map(|text| resized(text, &o, &n))
                .unwrap_or_default();
            for edit in edits.iter().cloned().chain(own.into_iter().map(Some)) {
                trials += 1;
                if trials > MAX_TRIALS || !self.spend(cost) {
                    return best.map(|(_, w)| w);
                }
                let rank = if telling(&edit) { 1 } else { 2 };
                let mut instance = base.clone();
                if !set_at(&mut instance, &change.pointer, edit) {
                    continue;
                }
                let (a, b) = self.verdicts(&instance);
                if a == b || !wanted(a) {
                    continue;
                }
                let isolated = (a, b) != before;
                let exercised = self.exercised(change, &mut probe, &instance, (a, b), isolated);
                if !exercised {
                    continue;
                }
                let found = Witness {
                    accepted_by: if a { "old_only" } else { "new_only" },
                    instance,
                    isolated,
                };
                if isolated && rank == 1 && (a || change.class != Class::Unknown) {
                    return Some(found);
                }
                let rank = witness_rank(rank, isolated, a, change.class);
                if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                    best = Some((rank, found));
                }
            }
        }
        best.map(|(_, w)| w)
    }
}

impl Judge<'_> {
    /// Whether a separating instance exercises the change: one of the versions with only
    /// the change's keyword taken from the other (built once, on the first instance that
    /// separates them, when the budget allows) judges it as the other version does; with
    /// no keyword to isolate, the edit at the location must flip a verdict (at the whole
    /// instance, every edit is at the location).
    fn exercised(
        &self,
        change: &Change,
        probe: &mut Option<Option<(CompiledSchema, CompiledSchema)>>,
        instance: &Value,
        (a, b): (bool, bool),
        isolated: bool,
    ) -> bool {
        let (od, nd) = (self.old.document(), self.new.document());
        let probe = probe.get_or_insert_with(|| {
            let documents = values_in(od) + values_in(nd);
            if self.spend(documents.saturating_mul(PROBE_COST)) {
                self.probes(change)
            } else {
                None
            }
        });
        match probe {
            Some((old_made_new, new_made_old)) => {
                old_made_new.is_valid(instance) == b || new_made_old.is_valid(instance) == a
            }
            None => isolated || change.pointer.is_empty(),
        }
    }
}

/// The edits a structural witness tries at the change's location (none, the member
/// removed, first): values of a branch added or removed, of each version's subschemas
/// there, and the values that tell them apart, each once.
fn witness_edits(
    (od, nd): (&Value, &Value),
    change: &Change,
    (o, n): (&[&Value], &[&Value]),
) -> Vec<Option<Value>> {
    let mut values = Vec::new();
    if let Some(branch) = structural::branch_of(change) {
        let root = if change.kind == "branch_removed" {
            od
        } else {
            nd
        };
        values.extend(generate::candidates(root, branch, 3));
    }
    for (root, side) in [(od, o), (nd, n)] {
        for s in side.iter() {
            values.extend(generate::candidates(root, s, 4));
        }
    }
    values.extend(candidates(o, n));
    std::iter::once(None)
        .chain(unique(values).into_iter().map(Some))
        .collect()
}

/// A witness's rank, lower preferred: telling values (rank 1) before others (2), an
/// isolated witness first; for an undecided change a narrowing is what matters most, so
/// an old-only witness is preferred.
fn witness_rank(rank: u8, isolated: bool, old_admits: bool, class: Class) -> u8 {
    rank + if isolated { 0 } else { 2 }
        + if !old_admits && class == Class::Unknown {
            4
        } else {
            0
        }
}

impl Judge<'_> {
    /// The old version with only `change`'s keyword at its location as the new version has
    /// it, and the new version with it as the old one has it; `None` when the change names
    /// no keyword written at the location itself (a branch's, a member's) or a document
    /// does not compile alone.
    pub(super) fn probes(&self, change: &Change) -> Option<(CompiledSchema, CompiledSchema)> {
        let word = changed_keyword(change)?;
        let (od, nd) = (self.old.document(), self.new.document());
        Some((
            probe(od, nd, &change.pointer, word)?,
            probe(nd, od, &change.pointer, word)?,
        ))
    }
}

/// `from` with `word` at the instance location `pointer` set as `to` has it there (or
/// removed), compiled like the guard's schemas.
pub(super) fn probe(from: &Value, to: &Value, pointer: &str, word: &str) -> Option<CompiledSchema> {
    let (o, n) = (
        structural::conjunction(from, pointer),
        structural::conjunction(to, pointer),
    );
    let wanted = subschemas::keyword(&n, word);
    if subschemas::keyword(&o, word) == wanted {
        return None;
    }
    let holders: Vec<String> = o
        .iter()
        .filter(|s| s.get(word).is_some())
        .map(|s| path_of(from, s))
        .collect::<Option<_>>()?;
    let target = match holders.first() {
        Some(p) => p.clone(),
        None => path_of(from, o.first()?)?,
    };
    let mut document = from.clone();
    for p in &holders {
        document.pointer_mut(p)?.as_object_mut()?.remove(word);
    }
    if let Some(value) = wanted {
        document
            .pointer_mut(&target)?
            .as_object_mut()?
            .insert(word.to_owned(), value.clone());
    }
    compiled(document, "airlock://certify/probe.json")
}

/// `document` compiled as the guard compiles a schema, or `None` when it does not.
fn compiled(document: Value, uri: &str) -> Option<CompiledSchema> {
    let source = document.to_string();
    CompiledSchema::compile(
        document,
        source.as_bytes(),
        uri,
        &airlock_guard::Resources::new(),
    )
    .ok()
}

/// The keyword a structural change is about, when it is one keyword at its location.
pub(super) fn changed_keyword(change: &Change) -> Option<&'static str> {
    match change.focus {
        Focus::Keyword(word) => Some(word),
        _ => None,
    }
}

/// The JSON pointer of `node` (by identity) inside `document`.
pub(super) fn path_of(document: &Value, node: &Value) -> Option<String> {
    let mut todo = vec![(document, String::new())];
    while let Some((at, path)) = todo.pop() {
        if std::ptr::eq(at, node) {
            return Some(path);
        }
        match at {
            Value::Object(map) => todo.extend(
                map.iter()
                    .map(|(k, v)| (v, format!("{path}/{}", crate::cases::escape_token(k)))),
            ),
            Value::Array(items) => todo.extend(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (v, format!("{path}/{i}"))),
            ),
            _ => {}
        }
    }
    None
}

/// The values a location's `enum` and `const` list.
pub(super) fn listed(schemas: &[&Value]) -> Vec<Value> {
    let mut values: Vec<Value> = subschemas::keyword(schemas, "enum")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    values.extend(subschemas::keyword(schemas, "const").cloned());
    values
}

/// Candidate values for a location: values one version's `enum`/`const` allow and the
/// other's do not (plus one both allow), edges of the limits, one value of each type.
pub(super) fn candidates(o: &[&Value], n: &[&Value]) -> Vec<Value> {
    let keyword = subschemas::keyword;
    let (os, ns) = (listed(o), listed(n));
    let (oset, nset): (ValueSet, ValueSet) = (os.iter().collect(), ns.iter().collect());
    let mut out: Vec<Value> = os.iter().filter(|v| !nset.contains(v)).cloned().collect();
    out.extend(ns.iter().filter(|v| !oset.contains(v)).cloned());
    out.extend(os.iter().find(|v| nset.contains(v)).cloned());
    if let (Some(Value::String(a)), Some(Value::String(b))) =
        (keyword(o, "pattern"), keyword(n, "pattern"))
    {
        // The shortest strings only one of the patterns matches.
        for (x, y) in [(a, b), (b, a)] {
            if let pattern::Only::Example(s) = pattern::only_in(x, y) {
                out.push(Value::String(s));
            }
        }
    }
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
        if let Some(m) = keyword(schemas, "multipleOf").and_then(Value::as_f64) {
            out.extend([m, 2.0 * m, 3.0 * m].into_iter().map(number));
        }
        for word in ["maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum"] {
            if let Some(v) = keyword(schemas, word).and_then(Value::as_f64) {
                out.extend([v - 1.0, v, v + 1.0].into_iter().map(number));
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

/// A number as JSON, an integer when it is whole (`2`, not `2.0`: an `integer` location
/// admits only the former).
pub(super) fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation)]
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}

/// Edits of a string a base holds: cut to and just past each length limit (its own
/// characters, so a pattern it matched still has a chance).
pub(super) fn resized(text: &str, o: &[&Value], n: &[&Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for schemas in [o, n] {
        for word in ["maxLength", "minLength"] {
            let Some(len) = subschemas::keyword(schemas, word).and_then(Value::as_u64) else {
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

/// Bases lacking a change's location that get it built.
pub(super) const MAX_BUILT_BASES: usize = 8;

/// The number of JSON values in `value` (itself, its members and items, at any depth).
pub(super) fn values_in(value: &Value) -> usize {
    let mut count = 0;
    let mut todo = vec![value];
    while let Some(v) = todo.pop() {
        count += 1;
        match v {
            Value::Object(map) => todo.extend(map.values()),
            Value::Array(items) => todo.extend(items),
            _ => {}
        }
    }
    count
}

impl Judge<'_> {
    /// The bases (at most `MAX_BUILT_BASES`) lacking `parent` with the members and items
    /// along it built from what `document` (the old version's when `old`) says of each
    /// location; once per location and version, within the witness search's budget.
    fn built(&self, bases: &[Value], parent: &str, document: &Value, old: bool) -> Rc<Vec<Value>> {
        let key = (parent.to_owned(), old);
        if let Some(built) = self.built.borrow().get(&key) {
            return Rc::clone(built);
        }
        let mut steps: HashMap<String, Option<Value>> = HashMap::new();
        let mut built = Vec::new();
        for base in bases
            .iter()
            .filter(|b| b.pointer(parent).is_none())
            .take(MAX_BUILT_BASES)
        {
            let mut base = base.clone();
            let made = materialize_with(&mut base, parent, |at| {
                steps
                    .entry(at.to_owned())
                    .or_insert_with(|| built_at(document, at))
                    .clone()
            });
            if !self.spend(values_in(&base)) {
                break;
            }
            if made {
                built.push(base);
            }
        }
        let built = Rc::new(built);
        self.built.borrow_mut().insert(key, Rc::clone(&built));
        built
    }
}

/// An object or array generated from what `document` says of the location `at`.
fn built_at(document: &Value, at: &str) -> Option<Value> {
    let nodes: Vec<Value> = structural::conjunction(document, at)
        .into_iter()
        .cloned()
        .collect();
    generate::candidates(document, &json!({"allOf": nodes}), 5)
        .into_iter()
        .find(|v| v.is_object() || v.is_array())
}

/// Build the members and items along `pointer` that `value` lacks, each from `built` of
/// its location; false when a step cannot be built.
fn materialize_with(
    value: &mut Value,
    pointer: &str,
    mut built: impl FnMut(&str) -> Option<Value>,
) -> bool {
    let tokens: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    let mut at = String::new();
    let mut current = value;
    for token in tokens {
        at = format!("{at}/{}", crate::cases::escape_token(&token));
        current = match current {
            Value::Object(map) => {
                if !map.contains_key(&token) {
                    let Some(v) = built(&at) else { return false };
                    map.insert(token.clone(), v);
                }
                match map.get_mut(&token) {
                    Some(next) => next,
                    None => return false,
                }
            }
            Value::Array(items) => {
                let Ok(index) = token.parse::<usize>() else {
                    return false;
                };
                if index == items.len() {
                    let Some(v) = built(&at) else { return false };
                    items.push(v);
                }
                match items.get_mut(index) {
                    Some(next) => next,
                    None => return false,
                }
            }
            _ => return false,
        };
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    fn schema(document: &Value) -> CompiledSchema {
        compiled(document.clone(), "airlock://test.json").unwrap()
    }

    /// An object of `n` required members, each of type `kind`.
    fn members(n: usize, kind: &str) -> Value {
        let properties: Map<String, Value> = (0..n)
            .map(|i| (format!("m{i}"), json!({"type": kind})))
            .collect();
        let names: Vec<String> = (0..n).map(|i| format!("m{i}")).collect();
        json!({"type": "object", "additionalProperties": false,
               "required": names, "properties": properties})
    }

    #[test]
    fn the_witness_search_spends_one_budget_over_every_change() {
        // 300 members changing type: no edit of one member isolates its change, so each
        // search would run to its 2 000 trials of a 300-member instance (360 M values).
        let (od, nd) = (members(300, "string"), members(300, "integer"));
        let (old, new) = (schema(&od), schema(&nd));
        let mut judge = Judge::new(&old, &new);
        judge.budget = 200_000;
        let bases = judge.bases(Vec::new());
        assert!(!bases.is_empty());
        let changes = structural::diff_view(&od, &nd, &View::fields(vec![String::new()]));
        assert_eq!(changes.len(), 600);
        for change in &changes {
            judge.structural_witness(change, &bases);
        }
        // Spent, and past the budget by at most one instance's values.
        let largest = bases.iter().map(values_in).max().unwrap();
        assert!(judge.work.get() >= judge.budget, "{}", judge.work.get());
        assert!(
            judge.work.get() <= judge.budget + largest,
            "{}",
            judge.work.get()
        );
    }

    #[test]
    fn bases_lacking_a_location_are_built_once_per_location() {
        let od = json!({"type": "object", "properties": {"a": members(3, "string")}});
        let nd = json!({"type": "object", "properties": {"a": members(3, "integer")}});
        let (old, new) = (schema(&od), schema(&nd));
        let judge = Judge::new(&old, &new);
        let bases = vec![json!({}), json!({"b": 1})];
        let first = judge.built(&bases, "/a", &od, true);
        assert_eq!(first.len(), 2, "{first:?}");
        assert!(
            first
                .iter()
                .all(|b| b.pointer("/a/m2").is_some_and(Value::is_string)),
            "{first:?}"
        );
        let spent = judge.work.get();
        let again = judge.built(&bases, "/a", &od, true);
        assert!(Rc::ptr_eq(&first, &again));
        assert_eq!(judge.work.get(), spent);
    }
}
