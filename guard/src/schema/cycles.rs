//! Reference cycles that never step into a child value. Such a cycle applies schemas to
//! the same value over and over; the validator cuts it and the value passes whatever it
//! is, so a schema holding one is refused at load.
//!
//! Keywords that **step into a child value** (a member, an item or a member name):
//! `properties`, `patternProperties`, `additionalProperties`, `unevaluatedProperties`,
//! `propertyNames`, `items` (one schema, or a draft-07/2019-09 tuple), `prefixItems`,
//! `additionalItems`, `unevaluatedItems`, `contains`, and
//! `contentSchema` (which applies to decoded content, never to the value itself). A cycle
//! through one of these is ordinary recursion: each turn is one level deeper in the
//! document, and the document's depth is bounded by `max_depth`.
//!
//! Keywords that apply **in place** (to the same value): `$ref`, `$dynamicRef`,
//! `$recursiveRef` (2019-09), `allOf`, `anyOf`, `oneOf`, `not`, `if`, `then`, `else`,
//! `dependentSchemas` and the schema entries of `dependencies` (draft-07). A cycle made
//! only of these is an error. References are followed within the schema document (`#…`
//! fragments, JSON pointers and `$anchor`/`$dynamicAnchor` names or a draft-07 `$id: "#name"`,
//! and the document's own `$id` or file name); [`in_place_ref_cycle_across`] also follows
//! references to the contract's other files. In draft-07 a `$ref` makes its siblings ignored, so a schema holding one has that
//! reference as its only in-place step; its siblings are still searched for cycles of
//! their own (a cycle there is refused too, although it never applies: refusing such a
//! schema is the safe side).

use serde_json::Value;
use std::collections::{HashMap, HashSet};

use super::dialect::Dialect;
use crate::pointer::Pointer;

/// Keywords whose value is one subschema applied to the same value.
const IN_PLACE_ONE: [&str; 4] = ["not", "if", "then", "else"];
/// Keywords whose value is an array of subschemas applied to the same value.
const IN_PLACE_MANY: [&str; 3] = ["allOf", "anyOf", "oneOf"];
/// Keywords whose value maps names to subschemas applied to the same value.
/// (`dependencies` entries that are arrays of names are not schemas; they have no steps.)
const IN_PLACE_MAP: [&str; 2] = ["dependentSchemas", "dependencies"];
/// Keywords whose value is one subschema applied to child values (`items` may also be an
/// array of them: a draft-07/2019-09 tuple).
const CHILD_ONE: [&str; 8] = [
    "items",
    "contains",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "unevaluatedItems",
    "contentSchema",
    "additionalItems",
];
/// Keywords whose value is an array of subschemas applied to child values.
const CHILD_MANY: [&str; 1] = ["prefixItems"];
/// Keywords whose value maps names to subschemas applied to child values, or not applied
/// at all (`$defs`): walked to find every schema, never an in-place step.
const CHILD_MAP: [&str; 4] = ["properties", "patternProperties", "$defs", "definitions"];

/// The first reference cycle of `schema` that applies only in place, as the schema
/// locations it passes through (`#/$defs/a`, `#/$defs/b`, `#/$defs/a`); `None` when every
/// cycle steps into a child value. `file_name` is the schema's own file name, which a
/// reference may use to name the document itself. The dialect is the one `schema`
/// declares (Draft 2020-12 when it declares none or one Airlock does not accept).
pub fn in_place_ref_cycle(schema: &Value, file_name: Option<&str>) -> Option<Vec<String>> {
    ref_cycle_in(
        schema,
        file_name,
        Dialect::of(schema).unwrap_or(Dialect::Draft2020_12),
    )
}

/// [`in_place_ref_cycle`] in a given dialect.
pub(crate) fn ref_cycle_in(
    schema: &Value,
    file_name: Option<&str>,
    dialect: Dialect,
) -> Option<Vec<String>> {
    let graph = Graph::new(schema, file_name, dialect);
    graph.first_cycle()
}

/// What is wrong with the in-place references of a schema.
#[derive(Debug, PartialEq)]
pub(crate) enum InPlace {
    /// [`in_place_ref_cycle`]'s cycle.
    Cycle(Vec<String>),
    /// The first schema (in document order) that applies more than
    /// [`MAX_IN_PLACE`](super::MAX_IN_PLACE) subschemas to one value, as a location
    /// (`#/$defs/d0`), and how many (saturating).
    TooMuchWork { at: String, count: u64 },
    /// The first schema whose longest chain of in-place subschemas is longer than
    /// [`MAX_IN_PLACE_DEPTH`](super::MAX_IN_PLACE_DEPTH), and its length.
    TooDeep { at: String, depth: u64 },
    /// More references than [`MAX_REFERENCES`](super::MAX_REFERENCES), and how many.
    TooManyReferences(usize),
}

/// A reference cycle that applies only in place, or else what [`InPlace`] names past its
/// limit (references, subschemas per value, the chain's depth): all read on one graph,
/// every reference resolved as the validator does (anchors, percent-encoded pointers, the
/// document's own name or `$id`, `$dynamicRef`, `$recursiveRef`).
pub(crate) fn in_place_check(
    schema: &Value,
    file_name: Option<&str>,
    dialect: Dialect,
) -> Option<InPlace> {
    Graph::new(schema, file_name, dialect).check()
}

struct Graph<'a> {
    root: &'a Value,
    dialect: Dialect,
    /// Every schema location (JSON pointer), in document order.
    nodes: Vec<String>,
    anchors: HashMap<&'a str, String>,
    dynamic_anchors: HashMap<&'a str, String>,
    own_names: Vec<&'a str>,
    /// How many `$ref`, `$dynamicRef` and `$recursiveRef` keywords the schemas hold.
    references: usize,
}

impl<'a> Graph<'a> {
    fn new(root: &'a Value, file_name: Option<&'a str>, dialect: Dialect) -> Self {
        let mut graph = Graph {
            root,
            dialect,
            nodes: Vec::new(),
            anchors: HashMap::new(),
            dynamic_anchors: HashMap::new(),
            own_names: file_name.into_iter().collect(),
            references: 0,
        };
        if let Some(id) = root.get("$id").and_then(Value::as_str) {
            let id = id.split('#').next().unwrap_or_default();
            graph.own_names.push(id);
            if let Some((_, last)) = id.rsplit_once('/') {
                graph.own_names.push(last);
            }
        }
        let mut stack = vec![(root, String::new())];
        while let Some((node, pointer)) = stack.pop() {
            let Some(map) = node.as_object() else {
                continue;
            };
            graph.references += ["$ref", "$dynamicRef", "$recursiveRef"]
                .iter()
                .filter(|k| map.get(**k).is_some_and(Value::is_string))
                .count();
            for (key, anchors) in [
                ("$anchor", &mut graph.anchors),
                ("$dynamicAnchor", &mut graph.dynamic_anchors),
            ] {
                if let Some(name) = map.get(key).and_then(Value::as_str) {
                    anchors.entry(name).or_insert_with(|| pointer.clone());
                }
            }
            // Draft-07 names a location with a plain-name fragment `$id` (`"#foo"`).
            if let Some(name) = map
                .get("$id")
                .and_then(Value::as_str)
                .and_then(|id| id.strip_prefix('#'))
                .filter(|name| !name.is_empty() && !name.starts_with('/'))
            {
                graph.anchors.entry(name).or_insert_with(|| pointer.clone());
            }
            // Reversed onto the stack: schemas are visited, and cycles reported, in
            // document order.
            for (keyword, child) in subschemas(map).into_iter().rev() {
                stack.push((child, format!("{pointer}/{keyword}")));
            }
            graph.nodes.push(pointer);
        }
        graph
    }

    /// The in-place successors of the schema at `pointer`.
    fn in_place(&self, pointer: &str) -> Vec<String> {
        let Some(map) = self.root.pointer(pointer).and_then(Value::as_object) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let references = [
            ("$ref", false),
            ("$dynamicRef", true),
            ("$recursiveRef", true),
        ];
        for (keyword, dynamic) in references {
            if let Some(target) = map
                .get(keyword)
                .and_then(Value::as_str)
                .and_then(|r| self.resolve(pointer, r, dynamic))
            {
                out.push(target);
            }
        }
        if self.dialect.ref_overrides_siblings() && map.contains_key("$ref") {
            return out;
        }
        for keyword in IN_PLACE_ONE {
            if map.contains_key(keyword) {
                out.push(format!("{pointer}/{keyword}"));
            }
        }
        for keyword in IN_PLACE_MANY {
            if let Some(Value::Array(items)) = map.get(keyword) {
                out.extend((0..items.len()).map(|i| format!("{pointer}/{keyword}/{i}")));
            }
        }
        for keyword in IN_PLACE_MAP {
            if let Some(Value::Object(members)) = map.get(keyword) {
                out.extend(
                    members
                        .keys()
                        .map(|k| format!("{pointer}/{keyword}/{}", Pointer::escape_token(k))),
                );
            }
        }
        out
    }

    /// The location a reference written at `from` names in this document, if it does.
    fn resolve(&self, from: &str, reference: &str, dynamic: bool) -> Option<String> {
        let (document, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let resource = if document.is_empty() {
            self.resource_root(from)
        } else if self.own_names.contains(&document) {
            String::new()
        } else {
            return None;
        };
        let target = if fragment.is_empty() {
            resource
        } else if fragment.starts_with('/') {
            format!("{resource}{}", percent_decode(fragment)?)
        } else if dynamic {
            self.dynamic_anchors
                .get(fragment)
                .or_else(|| self.anchors.get(fragment))?
                .clone()
        } else {
            self.anchors.get(fragment)?.clone()
        };
        self.root.pointer(&target).map(|_| target)
    }

    /// The innermost schema enclosing `pointer` (itself included) that has its own `$id`:
    /// where a `#…` fragment written at `pointer` starts.
    fn resource_root(&self, pointer: &str) -> String {
        let mut candidate = pointer;
        loop {
            if candidate.is_empty() {
                return String::new();
            }
            // A draft-07 `$id` beside `$ref` is ignored, and `"#name"` names a location
            // without starting a resource.
            let schema = self.root.pointer(candidate);
            let ignored = self.dialect.ref_overrides_siblings()
                && schema.is_some_and(|s| s.get("$ref").is_some());
            if !ignored
                && schema
                    .and_then(|s| s.get("$id"))
                    .and_then(Value::as_str)
                    .is_some_and(|id| !id.starts_with('#'))
            {
                return candidate.to_owned();
            }
            candidate = candidate.rsplit_once('/').map_or("", |(head, _)| head);
        }
    }

    fn check(&self) -> Option<InPlace> {
        if let Some(cycle) = self.first_cycle() {
            return Some(InPlace::Cycle(cycle));
        }
        if self.references > super::MAX_REFERENCES {
            return Some(InPlace::TooManyReferences(self.references));
        }
        let (counts, depths) = self.in_place_counts();
        let over = |of: &HashMap<String, u64>, limit: u64| {
            self.nodes.iter().find_map(|node| {
                let n = *of.get(node)?;
                (n > limit).then(|| (format!("#{node}"), n))
            })
        };
        if let Some((at, count)) = over(&counts, super::MAX_IN_PLACE) {
            return Some(InPlace::TooMuchWork { at, count });
        }
        let (at, depth) = over(&depths, super::MAX_IN_PLACE_DEPTH)?;
        Some(InPlace::TooDeep { at, depth })
    }

    /// For every schema: how many subschemas it applies in place to one value, itself
    /// included, every reference expanded (saturating); and its longest chain of them.
    /// Counted once per schema (memoised) in one depth-first pass with an explicit stack,
    /// so neither a 2^N fan-out nor a chain of 200 000 references costs more than the
    /// graph's size. An edge back onto the path (a cycle, refused before this is asked)
    /// counts 1.
    fn in_place_counts(&self) -> (HashMap<String, u64>, HashMap<String, u64>) {
        let mut counts: HashMap<String, u64> = HashMap::new();
        let mut depths: HashMap<String, u64> = HashMap::new();
        let mut on_path: HashSet<String> = HashSet::new();
        for start in &self.nodes {
            if counts.contains_key(start) {
                continue;
            }
            // (node, its successors, the next one to visit, its count and depth so far)
            let mut path: Vec<(String, Vec<String>, usize, u64, u64)> =
                vec![(start.clone(), self.in_place(start), 0, 1, 1)];
            on_path.insert(start.clone());
            while let Some((_, successors, next, total, depth)) = path.last_mut() {
                if let Some(successor) = successors.get(*next).cloned() {
                    *next += 1;
                    if let Some(count) = counts.get(&successor) {
                        *total = total.saturating_add(*count);
                        *depth = (*depth).max(depths[&successor].saturating_add(1));
                    } else if on_path.contains(&successor) {
                        *total = total.saturating_add(1);
                    } else {
                        on_path.insert(successor.clone());
                        let successors = self.in_place(&successor);
                        path.push((successor, successors, 0, 1, 1));
                    }
                    continue;
                }
                let Some((node, _, _, total, depth)) = path.pop() else {
                    break;
                };
                on_path.remove(&node);
                if let Some((_, _, _, parent, parent_depth)) = path.last_mut() {
                    *parent = parent.saturating_add(total);
                    *parent_depth = (*parent_depth).max(depth.saturating_add(1));
                }
                depths.insert(node.clone(), depth);
                counts.insert(node, total);
            }
        }
        (counts, depths)
    }

    /// Depth-first search over in-place edges (explicit stack, no recursion).
    fn first_cycle(&self) -> Option<Vec<String>> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            OnPath,
            Done,
        }
        let mut marks: HashMap<String, Mark> = HashMap::new();
        for start in &self.nodes {
            if marks.contains_key(start) {
                continue;
            }
            // (node, its successors, the next successor to visit)
            let mut path: Vec<(String, Vec<String>, usize)> =
                vec![(start.clone(), self.in_place(start), 0)];
            marks.insert(start.clone(), Mark::OnPath);
            while let Some((node, successors, next)) = path.last_mut() {
                let Some(successor) = successors.get(*next).cloned() else {
                    marks.insert(node.clone(), Mark::Done);
                    path.pop();
                    continue;
                };
                *next += 1;
                match marks.get(&successor) {
                    Some(Mark::Done) => {}
                    Some(Mark::OnPath) => {
                        let from = path.iter().position(|(n, _, _)| *n == successor)?;
                        let mut cycle: Vec<String> = path[from..]
                            .iter()
                            .map(|(n, _, _)| format!("#{n}"))
                            .collect();
                        cycle.push(format!("#{successor}"));
                        return Some(cycle);
                    }
                    None => {
                        marks.insert(successor.clone(), Mark::OnPath);
                        let successors = self.in_place(&successor);
                        path.push((successor, successors, 0));
                    }
                }
            }
        }
        None
    }
}

/// Every subschema position of a schema object: (escaped keyword path, subschema).
fn subschemas(map: &serde_json::Map<String, Value>) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for (keyword, value) in map {
        let keyword_str = keyword.as_str();
        let tuple = keyword_str == "items" && value.is_array();
        if !tuple && (IN_PLACE_ONE.contains(&keyword_str) || CHILD_ONE.contains(&keyword_str)) {
            out.push((Pointer::escape_token(keyword).into_owned(), value));
        } else if tuple || IN_PLACE_MANY.contains(&keyword_str) || CHILD_MANY.contains(&keyword_str)
        {
            if let Value::Array(items) = value {
                out.extend(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (format!("{}/{i}", Pointer::escape_token(keyword)), v)),
                );
            }
        } else if IN_PLACE_MAP.contains(&keyword_str) || CHILD_MAP.contains(&keyword_str) {
            if let Value::Object(members) = value {
                out.extend(members.iter().map(|(k, v)| {
                    (
                        format!(
                            "{}/{}",
                            Pointer::escape_token(keyword),
                            Pointer::escape_token(k)
                        ),
                        v,
                    )
                }));
            }
        }
    }
    out
}

/// `%XX` escapes of a URI fragment decoded; `None` when one is malformed.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The most documents [`in_place_ref_cycle_across`] follows.
const MAX_DOCUMENTS: usize = 64;

/// The first in-place reference cycle across `main` (the file `main_name`) and the other
/// files of the contract its references name, read with `fetch` (by file name, as a
/// reference writes it): locations are written `file#pointer`. `None` when every cycle
/// steps into a child value, or no other file is referenced.
pub fn in_place_ref_cycle_across(
    main: &Value,
    main_name: &str,
    dialect: Dialect,
    fetch: &mut dyn FnMut(&str) -> Option<Value>,
) -> Option<Vec<String>> {
    let (merged, names) = merged(main, main_name, fetch)?;
    let cycle = ref_cycle_in(&merged, None, dialect)?;
    Some(cycle.iter().map(|at| merged_location(at, &names)).collect())
}

/// [`in_place_check`] across `main` and the files of the contract its references name
/// (as [`in_place_ref_cycle_across`] reads them): `None` when no other file is named.
pub(crate) fn in_place_check_across(
    main: &Value,
    main_name: &str,
    dialect: Dialect,
    fetch: &mut dyn FnMut(&str) -> Option<Value>,
) -> Option<InPlace> {
    let (merged, names) = merged(main, main_name, fetch)?;
    Some(match in_place_check(&merged, None, dialect)? {
        InPlace::Cycle(cycle) => {
            InPlace::Cycle(cycle.iter().map(|at| merged_location(at, &names)).collect())
        }
        InPlace::TooMuchWork { at, count } => InPlace::TooMuchWork {
            at: merged_location(&at, &names),
            count,
        },
        InPlace::TooDeep { at, depth } => InPlace::TooDeep {
            at: merged_location(&at, &names),
            depth,
        },
        many @ InPlace::TooManyReferences(_) => many,
    })
}

/// One document holding `main` and every file of the contract its references name
/// (read with `fetch`, at most [`MAX_DOCUMENTS`]), each under `#/$defs/<index>`, its
/// references rewritten to point there and `$id`s dropped so that every fragment is from
/// the root; and the files' names by index. `None` when no other file is named or read.
fn merged(
    main: &Value,
    main_name: &str,
    fetch: &mut dyn FnMut(&str) -> Option<Value>,
) -> Option<(Value, Vec<String>)> {
    // Most schemas name no other file: nothing to merge, and nothing cloned.
    let mut names_a_file = false;
    references(main, &mut |reference| {
        names_a_file |= file_of(reference).is_some()
    });
    if !names_a_file {
        return None;
    }
    let mut documents: Vec<(String, Value)> = vec![(main_name.to_owned(), main.clone())];
    let mut next = 0;
    while next < documents.len() && documents.len() < MAX_DOCUMENTS {
        let mut names = Vec::new();
        references(&documents[next].1, &mut |reference| {
            if let Some(name) = file_of(reference) {
                names.push(name.to_owned());
            }
        });
        for name in names {
            if !documents.iter().any(|(n, _)| *n == name) && documents.len() < MAX_DOCUMENTS {
                if let Some(document) = fetch(&name) {
                    documents.push((name, document));
                }
            }
        }
        next += 1;
    }
    if documents.len() < 2 {
        return None;
    }
    let names: Vec<String> = documents.iter().map(|(n, _)| n.clone()).collect();
    let mut defs = serde_json::Map::new();
    for (index, (_, mut document)) in documents.into_iter().enumerate() {
        rewrite(&mut document, index, &names);
        defs.insert(index.to_string(), document);
    }
    Some((serde_json::json!({ "$defs": defs }), names))
}

/// A location of the merged document (`#/$defs/1/x`) as its file's (`b.json#/x`).
fn merged_location(at: &str, names: &[String]) -> String {
    let rest = at.trim_start_matches("#/$defs/");
    let (index, pointer) = rest.split_once('/').unwrap_or((rest, ""));
    let name = index
        .parse::<usize>()
        .ok()
        .and_then(|i| names.get(i))
        .map_or("?", String::as_str);
    format!(
        "{name}#{}",
        if pointer.is_empty() {
            String::new()
        } else {
            format!("/{pointer}")
        }
    )
}

/// The file a reference names, when it names one (a relative `name.json`, or the last
/// segment of an absolute contract URI); `None` for `#…` and remote references.
fn file_of(reference: &str) -> Option<&str> {
    let document = reference.split('#').next().unwrap_or_default();
    if document.is_empty() || document.starts_with("http:") || document.starts_with("https:") {
        return None;
    }
    let name = document.rsplit('/').next().unwrap_or(document);
    (!name.is_empty()).then_some(name)
}

/// Every `$ref` and `$dynamicRef` string of `value`.
fn references(value: &Value, each: &mut dyn FnMut(&str)) {
    let mut stack = vec![value];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                for (key, child) in map {
                    match (key.as_str(), child) {
                        ("$ref" | "$dynamicRef", Value::String(r)) => each(r),
                        _ => stack.push(child),
                    }
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
}

/// Rewrite the references of document `index` to point into the merged document, and
/// drop its `$id`s.
fn rewrite(value: &mut Value, index: usize, names: &[String]) {
    let mut stack = vec![value];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                map.remove("$id");
                for (key, child) in map.iter_mut() {
                    match (key.as_str(), child) {
                        ("$ref" | "$dynamicRef", Value::String(r)) => {
                            let (document, fragment) = r.split_once('#').unwrap_or((r, ""));
                            let target = if document.is_empty() {
                                Some(index)
                            } else {
                                file_of(r).and_then(|n| names.iter().position(|m| m == n))
                            };
                            if let Some(target) = target {
                                *r = if fragment.is_empty() || fragment.starts_with('/') {
                                    format!("#/$defs/{target}{fragment}")
                                } else {
                                    format!("#{fragment}")
                                };
                            } else if !document.is_empty() {
                                // A file that was not read: left unresolved.
                                *r = format!("{document}#{fragment}");
                            }
                        }
                        (_, child) => stack.push(child),
                    }
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cycle(schema: Value) -> Option<Vec<String>> {
        in_place_ref_cycle(&schema, Some("v1.schema.json"))
    }

    #[test]
    fn a_ref_to_itself_is_an_in_place_cycle() {
        let found = cycle(json!({"$defs": {"a": {"$ref": "#/$defs/a"}}})).unwrap();
        assert_eq!(found, ["#/$defs/a", "#/$defs/a"]);
    }

    #[test]
    fn a_cycle_through_all_of_and_the_root_is_in_place() {
        let found = cycle(json!({"allOf": [{"$ref": "#"}]})).unwrap();
        assert_eq!(found, ["#", "#/allOf/0", "#"]);
    }

    #[test]
    fn a_cycle_through_an_anchor_or_the_documents_own_name_is_found() {
        assert!(
            cycle(json!({"$defs": {"a": {"$anchor": "x", "oneOf": [{"$ref": "#x"}]}}})).is_some()
        );
        assert!(cycle(json!({"not": {"$ref": "v1.schema.json"}})).is_some());
        assert!(cycle(json!({"$defs": {"a": {"$ref": "#/%24defs/a"}}})).is_some());
    }

    #[test]
    fn recursion_through_a_child_keyword_is_not_an_in_place_cycle() {
        assert_eq!(
            cycle(json!({"type": "object", "properties": {"next": {"$ref": "#"}}})),
            None
        );
        assert_eq!(cycle(json!({"items": {"$ref": "#"}})), None);
        assert_eq!(
            cycle(
                json!({"$defs": {"a": {"anyOf": [{"type": "null"}, {"prefixItems": [{"$ref": "#/$defs/a"}]}]}}})
            ),
            None
        );
    }

    #[test]
    fn a_draft_07_cycle_through_definitions_and_a_plain_name_id_is_found() {
        let draft7 = "http://json-schema.org/draft-07/schema#";
        let found = cycle(json!({"$schema": draft7,
            "definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"anyOf": [{"$ref": "#/definitions/a"}]}}}))
        .unwrap();
        assert_eq!(
            found,
            [
                "#/definitions/a",
                "#/definitions/b",
                "#/definitions/b/anyOf/0",
                "#/definitions/a"
            ]
        );
        assert!(cycle(json!({"$schema": draft7,
            "definitions": {"a": {"$id": "#here", "allOf": [{"$ref": "#here"}]}}}))
        .is_some());
        // Schema entries of `dependencies` apply in place; name lists are not schemas.
        assert!(cycle(json!({"$schema": draft7,
            "dependencies": {"x": {"$ref": "#"}, "y": ["z"]}}))
        .is_some());
    }

    #[test]
    fn in_draft_07_a_ref_is_the_only_in_place_step_of_its_schema() {
        let draft7 = "http://json-schema.org/draft-07/schema#";
        // The `allOf` beside the `$ref` is ignored in draft-07: no cycle.
        let schema = json!({"$schema": draft7, "definitions": {
            "a": {"$ref": "#/definitions/b", "allOf": [{"$ref": "#/definitions/a"}]},
            "b": {"type": "string"}}});
        assert_eq!(cycle(schema.clone()), None);
        // In 2019-09 and 2020-12 it composes, and loops.
        let mut later = schema;
        later["$schema"] = json!("https://json-schema.org/draft/2019-09/schema");
        assert!(cycle(later.clone()).is_some());
        later.as_object_mut().unwrap().remove("$schema");
        assert!(cycle(later).is_some());
    }

    #[test]
    fn tuple_items_are_searched_and_step_into_items() {
        let draft7 = "http://json-schema.org/draft-07/schema#";
        assert_eq!(
            cycle(
                json!({"$schema": draft7, "items": [{"$ref": "#"}], "additionalItems": {"$ref": "#"}})
            ),
            None
        );
        assert!(
            cycle(json!({"$schema": draft7, "items": [{"not": {"$ref": "#/items/0"}}]})).is_some()
        );
    }

    #[test]
    fn a_2019_09_recursive_ref_in_place_is_a_cycle() {
        let found = cycle(
            json!({"$schema": "https://json-schema.org/draft/2019-09/schema",
            "$recursiveAnchor": true, "anyOf": [{"$recursiveRef": "#"}]}),
        );
        assert!(found.is_some());
        assert_eq!(
            cycle(
                json!({"$schema": "https://json-schema.org/draft/2019-09/schema",
                "$recursiveAnchor": true, "properties": {"next": {"$recursiveRef": "#"}}})
            ),
            None
        );
    }

    #[test]
    fn references_to_other_documents_are_not_followed() {
        assert_eq!(cycle(json!({"$ref": "other.json#"})), None);
    }

    #[test]
    fn a_cycle_through_another_file_of_the_contract_is_found_across_documents() {
        let main = json!({"$defs": {"a": {"$ref": "b.json#/$defs/x"}}, "properties": {"v": {"$ref": "#/$defs/a"}}});
        let b = json!({"$defs": {"x": {"allOf": [{"$ref": "v1.schema.json#/$defs/a"}]}}});
        let mut fetch = |name: &str| (name == "b.json").then(|| b.clone());
        let d = Dialect::Draft2020_12;
        let found = in_place_ref_cycle_across(&main, "v1.schema.json", d, &mut fetch).unwrap();
        assert_eq!(found.first(), found.last());
        assert!(found.iter().any(|l| l.starts_with("b.json#")), "{found:?}");
        // Recursion through a child keyword across files is not a cycle.
        let b = json!({"$defs": {"x": {"properties": {"n": {"$ref": "v1.schema.json#/$defs/a"}}}}});
        let mut fetch = |name: &str| (name == "b.json").then(|| b.clone());
        assert_eq!(
            in_place_ref_cycle_across(&main, "v1.schema.json", d, &mut fetch),
            None
        );
        // No other file referenced: nothing to do here.
        let mut none = |_: &str| None;
        assert_eq!(
            in_place_ref_cycle_across(&json!({}), "v1.schema.json", d, &mut none),
            None
        );
    }
}
