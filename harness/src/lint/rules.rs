//! The rules: a walk of the schema from the root, following local `$ref`s in place so a
//! definition is judged in the context of each use, and the checks of every rule, in the
//! schema's own dialect (draft-07, 2019-09 or 2020-12).

use airlock_guard::{Dialect, Pointer, DRAFT_2020_12};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

use crate::adversary::schema_at;
use crate::cases::escape_token;

pub(super) struct Linter<'s> {
    document: &'s Value,
    tool: Option<&'s str>,
    /// The dialect the document declares (2020-12 when it declares none, or one the guard
    /// refuses: `schema-dialect` says so).
    dialect: Dialect,
    /// Every `#…` target of a `$ref` in the document: linted where used, in the context
    /// of each use (closed by the referring schema or not), not on their own.
    referenced: BTreeSet<String>,
    /// (pointer, closed by context) already walked: each schema once per context, and
    /// recursive references end.
    visited: BTreeSet<(String, bool)>,
    /// (rule, pointer, message) of every finding, in walk order.
    pub(super) raw: Vec<(&'static str, String, String)>,
    /// How many composition branches, conditions or `contains` the walk is inside: a
    /// branch may leave members optional that its siblings or parent require.
    branch: usize,
}

/// Keywords whose value is one subschema applying to the same instance.
const IN_PLACE_ONE: &[&str] = &["not", "if", "then", "else"];
/// Keywords whose value is an array of subschemas applying to the same instance.
const IN_PLACE_MANY: &[&str] = &["allOf", "anyOf", "oneOf"];
/// Keywords whose value is one subschema for members or items.
/// (`items` may also be an array: a draft-07/2019-09 tuple, walked like `prefixItems`.)
const CHILD_ONE: &[&str] = &[
    "additionalItems",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "items",
    "unevaluatedItems",
];
/// Keywords whose value maps names to subschemas.
/// (`$defs` and `definitions` hold schemas too, walked by `definitions`.)
const CHILD_MAP: &[&str] = &["properties", "patternProperties"];

impl<'s> Linter<'s> {
    /// A linter of `document`, for the contract of `tool` if any.
    pub(super) fn new(document: &'s Value, tool: Option<&'s str>) -> Self {
        Self {
            document,
            tool,
            dialect: Dialect::of(document).unwrap_or(Dialect::Draft2020_12),
            referenced: local_targets(document),
            visited: BTreeSet::new(),
            raw: Vec::new(),
            branch: 0,
        }
    }

    pub(super) fn flag(&mut self, rule: &'static str, pointer: &str, message: impl Into<String>) {
        self.raw.push((rule, pointer.to_owned(), message.into()));
    }

    pub(super) fn walk(&mut self, schema: &'s Value, pointer: String, closed: bool) {
        let Some(object) = schema.as_object() else {
            return;
        };
        if !self.visited.insert((pointer.clone(), closed)) {
            return;
        }
        // In draft-07 a `$ref` makes its siblings ignored: only the reference applies (and
        // the definitions beside it are still definitions).
        if self.dialect.ref_overrides_siblings() && object.contains_key("$ref") {
            self.check_refs(object, &pointer);
            for (key, value) in object {
                let at = format!("{pointer}/{}", escape_token(key));
                match key.as_str() {
                    "$ref" => self.follow(value, closed),
                    "$defs" | "definitions" => self.definitions(value, &at),
                    _ => {}
                }
            }
            return;
        }
        self.check(object, &pointer, closed);
        // Branches applying to an instance this schema closes need not close it again
        // (with `additionalProperties`, `composition-needs-unevaluated` says what is wrong).
        let closes = ["unevaluatedProperties", "additionalProperties"]
            .iter()
            .any(|k| object.get(*k) == Some(&Value::Bool(false)));
        for (key, value) in object {
            let at = format!("{pointer}/{}", escape_token(key));
            let key = key.as_str();
            if IN_PLACE_ONE.contains(&key) {
                self.in_place(value, at, closed || closes);
            } else if IN_PLACE_MANY.contains(&key) {
                for (i, branch) in value.as_array().into_iter().flatten().enumerate() {
                    self.in_place(branch, format!("{at}/{i}"), closed || closes);
                }
            } else if key == "items" && value.is_array() || key == "prefixItems" {
                for (i, item) in value.as_array().into_iter().flatten().enumerate() {
                    self.walk(item, format!("{at}/{i}"), false);
                }
            } else if CHILD_ONE.contains(&key) {
                self.walk(value, at, false);
            } else if key == "dependentSchemas" || key == "dependencies" {
                // (`dependencies` entries that are lists of names are not schemas.)
                for (name, sub) in value.as_object().into_iter().flatten() {
                    let at = format!("{at}/{}", escape_token(name));
                    self.in_place(sub, at, closed || closes);
                }
            } else if key == "contains" {
                // Only asserts that some item matches; the items schema closes items.
                self.branch += 1;
                self.walk(value, at, true);
                self.branch -= 1;
            } else if key == "$ref" {
                self.follow(value, closed || closes);
            } else if key == "$defs" || key == "definitions" {
                self.definitions(value, &at);
            } else if CHILD_MAP.contains(&key) {
                for (name, sub) in value.as_object().into_iter().flatten() {
                    let at = format!("{at}/{}", escape_token(name));
                    if key == "properties" && unconstrained(sub) {
                        self.flag(
                            "unconstrained",
                            &at,
                            format!("member {name:?} accepts any value: give it a type and bounds"),
                        );
                    }
                    self.walk(sub, at, false);
                }
            }
        }
    }

    /// `$ref` applies to the same instance: its local target is linted in this context.
    fn follow(&mut self, reference: &'s Value, closed: bool) {
        let target = reference.as_str().and_then(|r| r.strip_prefix('#'));
        if let Some((target, schema)) =
            target.and_then(|t| self.document.pointer(t).map(|s| (t, s)))
        {
            self.walk(schema, target.to_owned(), closed);
        }
    }

    /// `$defs`/`definitions` at `at`: a definition that is referenced is linted where it
    /// is used, the others on their own.
    fn definitions(&mut self, defs: &'s Value, at: &str) {
        for (name, sub) in defs.as_object().into_iter().flatten() {
            let at = format!("{at}/{}", escape_token(name));
            if !self.referenced.contains(&at) {
                self.walk(sub, at, false);
            }
        }
    }

    /// A subschema applying to the same instance (its `$ref` is followed by `walk`).
    fn in_place(&mut self, schema: &'s Value, pointer: String, closed: bool) {
        self.branch += 1;
        self.walk(schema, pointer, closed);
        self.branch -= 1;
    }

    fn check(&mut self, object: &'s serde_json::Map<String, Value>, pointer: &str, closed: bool) {
        let types = types(object);
        let is_object = types.contains(&"object") || object.contains_key("properties");
        let additional = object.get("additionalProperties");
        let unevaluated = object.get("unevaluatedProperties");
        let closed_here =
            additional == Some(&Value::Bool(false)) || unevaluated == Some(&Value::Bool(false));
        if object.contains_key("patternProperties") {
            self.flag(
                "free-form-map",
                &format!("{pointer}/patternProperties"),
                "members of any name matching a pattern are admitted; list them in `properties`",
            );
        }
        for keyword in ["additionalProperties", "unevaluatedProperties"] {
            if object.get(keyword).is_some_and(Value::is_object) {
                self.flag(
                    "free-form-map",
                    &format!("{pointer}/{keyword}"),
                    format!("`{keyword}` is a schema: members of any name are admitted"),
                );
            }
        }
        let free_form =
            additional.is_some_and(Value::is_object) || unevaluated.is_some_and(Value::is_object);
        if is_object && !closed_here && !closed && !free_form {
            self.flag(
                "open-object",
                pointer,
                "this object admits members it does not list: add `additionalProperties: false` \
                 (or `unevaluatedProperties: false` when composing with `allOf`)",
            );
        }
        if is_object && self.branch == 0 && admits_empty(object) {
            self.flag(
                "all-optional",
                pointer,
                "every member is optional and there is no `minProperties`: `{}` is admitted; \
                 require the members a response must carry",
            );
        }
        if additional == Some(&Value::Bool(false)) {
            let listed: BTreeSet<&str> = object
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let composed = self.composed_members(object);
            let unlisted: Vec<&str> = composed.difference(&listed).copied().collect();
            if !unlisted.is_empty() {
                self.flag(
                    "composition-needs-unevaluated",
                    &format!("{pointer}/additionalProperties"),
                    format!(
                        "`additionalProperties: false` does not see members declared in \
                         composed schemas, so {unlisted:?} are always rejected: use \
                         `unevaluatedProperties: false`"
                    ),
                );
            }
        }
        if types.contains(&"string") && !bounded_string(object) {
            self.flag(
                "unbounded-string",
                pointer,
                "a string without `maxLength` (or `enum`, `const`, a bounded anchored pattern) \
                 can carry any amount of text",
            );
        }
        let is_false = |k: &str| object.get(k) == Some(&Value::Bool(false));
        let closed_tuple = object.contains_key("prefixItems")
            && (is_false("items") || is_false("unevaluatedItems"))
            // A draft-07/2019-09 tuple: `items` as an array.
            || object.get("items").is_some_and(Value::is_array)
                && (is_false("additionalItems") || is_false("unevaluatedItems"));
        if (types.contains(&"array") || object.contains_key("items"))
            && !object.contains_key("maxItems")
            && !closed_tuple
        {
            self.flag("unbounded-array", pointer, "an array without `maxItems`");
        }
        let mut patterns: Vec<(String, &str)> = Vec::new();
        if let Some(p) = object.get("pattern").and_then(Value::as_str) {
            patterns.push((format!("{pointer}/pattern"), p));
        }
        for name in object
            .get("patternProperties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.keys())
        {
            patterns.push((
                format!("{pointer}/patternProperties/{}", escape_token(name)),
                name.as_str(),
            ));
        }
        for (at, pattern) in patterns {
            if !anchored(pattern) {
                self.flag(
                    "unanchored-pattern",
                    &at,
                    format!("`{pattern}` matches anywhere in the string: anchor it with `^…$`"),
                );
            }
            if nested_quantifier(pattern) {
                self.flag(
                    "backtracking-pattern",
                    &at,
                    format!(
                        "`{pattern}` quantifies a group that holds a quantifier: exponential on \
                         backtracking engines; Airlock's engine never backtracks, but its time \
                         grows with the pattern's size times the string's length"
                    ),
                );
            }
        }
        self.check_refs(object, pointer);
    }

    /// `remote-ref`: every reference keyword of `object`.
    fn check_refs(&mut self, object: &'s serde_json::Map<String, Value>, pointer: &str) {
        for keyword in ["$ref", "$dynamicRef", "$recursiveRef"] {
            if let Some(reference) = object.get(keyword).and_then(Value::as_str) {
                if self.remote(reference) {
                    self.flag(
                        "remote-ref",
                        &format!("{pointer}/{}", escape_token(keyword)),
                        format!(
                            "`{reference}` is outside the contract: only the contract's own \
                             files resolve, nothing is fetched"
                        ),
                    );
                }
            }
        }
    }

    /// Whether `reference` has a URI scheme and is not one of the contract's own files.
    fn remote(&self, reference: &str) -> bool {
        let scheme = reference.split_once(':').is_some_and(|(s, _)| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
        });
        let own_base = self
            .document
            .get("$id")
            .and_then(Value::as_str)
            .and_then(|id| id.rfind('/').map(|i| &id[..=i]));
        let own = self
            .tool
            .is_some_and(|tool| reference.starts_with(&format!("airlock://contract/{tool}/")))
            || own_base.is_some_and(|base| reference.starts_with(base));
        (scheme || reference.starts_with("//")) && !own
    }

    /// Member names declared by the composed schemas of `object` (its `allOf`, `anyOf`,
    /// `oneOf` branches, through a local `$ref`, one level).
    fn composed_members(&self, object: &'s serde_json::Map<String, Value>) -> BTreeSet<&'s str> {
        let mut names = BTreeSet::new();
        // A `$ref` beside the keywords composes like one more `allOf` branch.
        let sibling = object.get("$ref").filter(|_| object.contains_key("$ref"));
        let sibling_target = sibling
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| self.document.pointer(p));
        names.extend(
            sibling_target
                .and_then(|t| t.get("properties"))
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|m| m.keys().map(String::as_str)),
        );
        for keyword in IN_PLACE_MANY {
            for branch in object
                .get(*keyword)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let target = branch
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| r.strip_prefix('#'))
                    .and_then(|p| self.document.pointer(p))
                    .unwrap_or(branch);
                names.extend(
                    target
                        .get("properties")
                        .and_then(Value::as_object)
                        .into_iter()
                        .flat_map(|m| m.keys().map(String::as_str)),
                );
            }
        }
        names
    }

    /// Root-level rules: the dialect (an older accepted one is `older-dialect`, a warning;
    /// an unknown one `schema-dialect`, an error) and the envelope's branches.
    pub(super) fn root(&mut self, document: &'s Value) {
        match document.get("$schema") {
            None if document.is_object() => self.flag(
                "schema-dialect",
                "",
                format!("no `$schema`: declare {DRAFT_2020_12:?}"),
            ),
            None => {}
            Some(uri) => match uri.as_str().and_then(Dialect::from_uri) {
                Some(Dialect::Draft2020_12) => {}
                Some(older) => {
                    let rules = if older.ref_overrides_siblings() {
                        "a `$ref` makes the keywords beside it ignored, tuples are `items` \
                         arrays, and `unevaluatedProperties` does not exist"
                    } else {
                        "tuples are `items` arrays, and `$recursiveRef` stands for \
                         `$dynamicRef`"
                    };
                    self.flag(
                        "older-dialect",
                        "/$schema",
                        format!(
                            "{:?} ({older}) is accepted and read with its own rules: {rules}; \
                             prefer {DRAFT_2020_12:?} when the schema can be regenerated",
                            older.uri()
                        ),
                    );
                }
                None => self.flag(
                    "schema-dialect",
                    "/$schema",
                    format!(
                        "{uri} is not a dialect contracts use: {:?}, {:?} or {:?}",
                        Dialect::Draft2020_12.uri(),
                        Dialect::Draft2019_09.uri(),
                        Dialect::Draft7.uri()
                    ),
                ),
            },
        }
        for keyword in ["oneOf", "anyOf"] {
            let Some(branches) = document.get(keyword).and_then(Value::as_array) else {
                continue;
            };
            if branches.len() < 2 {
                continue;
            }
            let resolved: Vec<&Value> = branches
                .iter()
                .map(|b| {
                    b.get("$ref")
                        .and_then(Value::as_str)
                        .and_then(|r| r.strip_prefix('#'))
                        .and_then(|p| document.pointer(p))
                        .unwrap_or(b)
                })
                .collect();
            if discriminator(&resolved).is_none() {
                self.flag(
                    "envelope-overlap",
                    &format!("/{keyword}"),
                    "no required member with a distinct `const` in every branch (such as \
                     `outcome`): one response can match several branches",
                );
            }
        }
    }

    /// Agent fields that are free text.
    pub(super) fn agent_fields(&mut self, fields: &[Pointer]) {
        let addresses = addresses(self.document);
        for field in fields {
            let schemas = schema_at(self.document, field.as_str());
            // Each schema that admits strings must pin them down: a value set, a format,
            // or an anchored pattern without `.`.
            let free = |s: &&Value| {
                let Some(o) = s.as_object() else {
                    return false;
                };
                let pinned = ["enum", "const", "format"]
                    .iter()
                    .any(|k| o.contains_key(*k))
                    || o.get("pattern")
                        .and_then(Value::as_str)
                        .is_some_and(|p| anchored(p) && !syntax(p).contains(&'.'));
                types(o).contains(&"string") && !pinned
            };
            if schemas.iter().any(free) {
                let pointer = schemas
                    .iter()
                    .find_map(|s| addresses.get(&std::ptr::from_ref(*s)).cloned())
                    .unwrap_or_default();
                self.flag(
                    "free-text-agent-field",
                    &pointer,
                    format!(
                        "agent field {field} is free text: anything the upstream writes there \
                         reaches the agent; constrain it (`enum`, `pattern`, `format`) or allow it \
                         in contract.toml with a reason"
                    ),
                );
            }
        }
    }
}

/// The `type` keyword as a list (empty when absent).
fn types(object: &serde_json::Map<String, Value>) -> Vec<&str> {
    match object.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        // No `type`, but string keywords: it admits strings (and any other type).
        _ if ["minLength", "maxLength", "pattern", "format"]
            .iter()
            .any(|k| object.contains_key(*k)) =>
        {
            vec!["string"]
        }
        _ => Vec::new(),
    }
}

/// `true`, or an object holding annotations only: any value is valid.
/// An object schema that lists members, requires none, sets no `minProperties`, and has
/// nothing beside it (composition, conditions, dependencies, `$ref`) that could.
fn admits_empty(object: &serde_json::Map<String, Value>) -> bool {
    let lists = object
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    let requires = object
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty());
    let min = object
        .get("minProperties")
        .and_then(Value::as_f64)
        .is_some_and(|m| m > 0.0);
    let elsewhere = [
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        // `dependentRequired`, `dependentSchemas` and `dependencies` apply only when
        // their member is present: `{}` passes them all.
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
    ]
    .iter()
    .any(|k| object.contains_key(*k));
    lists && !requires && !min && !elsewhere
}

fn unconstrained(schema: &Value) -> bool {
    const ANNOTATIONS: &[&str] = &[
        "title",
        "description",
        "$comment",
        "examples",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
    ];
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => map.keys().all(|k| ANNOTATIONS.contains(&k.as_str())),
        _ => false,
    }
}

fn bounded_string(object: &serde_json::Map<String, Value>) -> bool {
    ["maxLength", "enum", "const"]
        .iter()
        .any(|k| object.contains_key(*k))
        || object
            .get("pattern")
            .and_then(Value::as_str)
            .is_some_and(|p| anchored(p) && !unbounded_quantifier(p))
}

/// `^…$` around the whole pattern (the `$` not escaped).
fn anchored(pattern: &str) -> bool {
    let ends = pattern.ends_with('$') && !pattern.ends_with("\\$") || pattern.ends_with("\\\\$");
    // `^a|b$` anchors each alternative at one end only.
    let mut depth = 0usize;
    let top_level_alternation = syntax(pattern).into_iter().any(|c| {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            '|' if depth == 0 => return true,
            _ => {}
        }
        false
    });
    pattern.starts_with('^') && ends && !top_level_alternation
}

/// The pattern's syntax with each escape and character class reduced to one symbol:
/// `\0` for a class of characters (`[a-z]`, `\d`), `\u{1}` for an escaped literal (`\.`).
fn syntax(pattern: &str) -> Vec<char> {
    let mut out = Vec::new();
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let escaped = chars.next();
                if !in_class {
                    let class = escaped.is_some_and(|e| e.is_ascii_alphanumeric());
                    out.push(if class { '\0' } else { '\u{1}' });
                }
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => {
                in_class = false;
                out.push('\0');
            }
            _ if in_class => {}
            _ => out.push(c),
        }
    }
    out
}

/// `*`, `+` or `{n,}` anywhere in the pattern.
fn unbounded_quantifier(pattern: &str) -> bool {
    let s: String = syntax(pattern).into_iter().collect();
    s.contains('*') || s.contains('+') || s.contains(",}")
}

/// A group that holds a `*`/`+`/`{…}` quantifier and is itself quantified so, unless
/// each iteration starts with a literal that is not repeated (`(-[a-z]+)*`): the engine
/// then has one way to split the input.
fn nested_quantifier(pattern: &str) -> bool {
    let s = syntax(pattern);
    let quantifier = |c: Option<&char>| matches!(c, Some('*' | '+' | '{'));
    let literal = |c: Option<&char>| c.is_some_and(|c| *c != '\0' && !"()[].|?*+{}^$".contains(*c));
    // Per open group: (holds a quantifier, starts with a delimiter).
    let mut open: Vec<(bool, bool)> = Vec::new();
    for (i, c) in s.iter().enumerate() {
        match c {
            '(' => {
                let delimited = literal(s.get(i + 1)) && !quantifier(s.get(i + 2));
                open.push((false, delimited));
            }
            ')' => {
                let (held, delimited) = open.pop().unwrap_or((false, false));
                if held && !delimited && quantifier(s.get(i + 1)) {
                    return true;
                }
                if let Some(parent) = open.last_mut() {
                    parent.0 |= held;
                }
            }
            '*' | '+' | '{' => {
                if let Some(top) = open.last_mut() {
                    top.0 = true;
                }
            }
            _ => {}
        }
    }
    false
}

/// A member every branch requires with a `const`, the consts pairwise distinct.
fn discriminator(branches: &[&Value]) -> Option<String> {
    let first = branches.first()?;
    let mut names = first.get("properties")?.as_object()?.keys();
    names
        .find(|name| {
            let mut seen: Vec<&Value> = Vec::new();
            branches.iter().all(|branch| {
                let required = branch
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)));
                // Only objects have members: a branch admitting other types overlaps.
                let object = branch.as_object().is_some_and(|b| types(b) == ["object"]);
                let member = branch.get("properties").and_then(|p| p.get(name.as_str()));
                let constant = member.and_then(|p| p.get("const")).or_else(|| {
                    match member.and_then(|p| p.get("enum")).and_then(Value::as_array) {
                        Some(single) if single.len() == 1 => single.first(),
                        _ => None,
                    }
                });
                match constant {
                    Some(c) if required && object && !seen.contains(&c) => {
                        seen.push(c);
                        true
                    }
                    _ => false,
                }
            })
        })
        .cloned()
}

/// The local (`#…`) targets of every `$ref` in `document`.
fn local_targets(document: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut todo = vec![document];
    while let Some(value) = todo.pop() {
        match value {
            Value::Object(map) => {
                if let Some(target) = map
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| r.strip_prefix('#'))
                {
                    out.insert(target.to_owned());
                }
                todo.extend(map.values());
            }
            Value::Array(items) => todo.extend(items),
            _ => {}
        }
    }
    out
}

/// The JSON pointer of every object in `document`, by address.
fn addresses(document: &Value) -> HashMap<*const Value, String> {
    pub(super) fn walk(value: &Value, pointer: String, out: &mut HashMap<*const Value, String>) {
        match value {
            Value::Object(map) => {
                out.insert(std::ptr::from_ref(value), pointer.clone());
                for (k, v) in map {
                    walk(v, format!("{pointer}/{}", escape_token(k)), out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, format!("{pointer}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = HashMap::new();
    walk(document, String::new(), &mut out);
    out
}
