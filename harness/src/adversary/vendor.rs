//! Vendor contracts (`[input] kind = "vendor"`): a body is the vendor's own document,
//! judged by the vendor schema and mapped member by member into `data`. The schema-driven
//! classes vary the document with the vendor schema (and, where a mapping takes a member
//! as it is, the contract schema's member it fills: see `Builder::schemas_at`); the
//! `vendor-*` classes here go after the mapping itself: canaries in unmapped members, in
//! near-miss spellings of mapped names and beside them, values of the wrong type a
//! normalisation might coerce, and the failure rules' edges. Nothing that is not mapped
//! may reach the agent; the reference (the guard) decides every verdict.

use airlock_guard::{FailureRule, InputKind, Mapping, Normalise, VendorInput};
use serde_json::{json, Map, Value};

use super::{Builder, Family};
use crate::cases::{escape_token, member_pointers, splice, Expectation};
use crate::corpus::Fixture;

/// Every `vendor-*` class for one accepted document.
pub(super) fn derived(b: &mut Builder<'_>, fixture: &Fixture, doc: &Value) {
    let InputKind::Vendor(vendor) = b.contract.input() else {
        return;
    };
    let mut v = Variants {
        f: Family {
            b,
            fixture,
            class: "",
        },
        vendor,
        doc,
    };
    v.unmapped();
    v.near_names();
    v.coerced();
    v.failure_edges();
}

struct Variants<'b, 'c, 'f> {
    f: Family<'b, 'c, 'f>,
    vendor: &'c VendorInput,
    doc: &'f Value,
}

/// `doc` with the member at `pointer` set to `new` (`None`: removed); `None` when its
/// parent is not an object.
fn edit(doc: &Value, pointer: &str, new: Option<Value>) -> Option<Value> {
    let mut d = doc.clone();
    let (parent, name) = pointer.rsplit_once('/')?;
    let Value::Object(map) = d.pointer_mut(parent)? else {
        return None;
    };
    let name = name.replace("~1", "/").replace("~0", "~");
    match new {
        Some(new) => {
            map.insert(name, new);
        }
        None => {
            map.shift_remove(&name)?;
        }
    }
    Some(d)
}

/// `doc` with the member at `pointer` renamed to `name`, in place (same position).
fn renamed(doc: &Value, pointer: &str, name: &str) -> Option<Value> {
    let mut d = doc.clone();
    let (parent, old) = pointer.rsplit_once('/')?;
    let old = old.replace("~1", "/").replace("~0", "~");
    let Value::Object(map) = d.pointer_mut(parent)? else {
        return None;
    };
    let renamed: Map<String, Value> = std::mem::take(map)
        .into_iter()
        .map(|(k, v)| {
            if k == old {
                (name.to_owned(), v)
            } else {
                (k, v)
            }
        })
        .collect();
    *map = renamed;
    Some(d)
}

/// The near-miss spellings of a member name: re-cased, padded, a look-alike letter,
/// snake_case as camelCase.
fn near_spellings(name: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let upper = name.to_uppercase();
    out.push((
        "recased",
        if upper == name {
            name.to_lowercase()
        } else {
            upper
        },
    ));
    let mut title: String = name.chars().take(1).flat_map(char::to_uppercase).collect();
    title.extend(name.chars().skip(1));
    out.push(("title_case", title));
    out.push(("trailing_space", format!("{name} ")));
    out.push(("leading_space", format!(" {name}")));
    if let Some((at, c, other)) = name.char_indices().find_map(|(at, c)| {
        let other = match c {
            'a' => 'а',
            'e' => 'е',
            'o' => 'о',
            'c' => 'с',
            'p' => 'р',
            'i' => 'і',
            's' => 'ѕ',
            'd' => 'ԁ',
            _ => return None,
        };
        Some((at, c, other))
    }) {
        let mut alike = name.to_owned();
        alike.replace_range(at..at + c.len_utf8(), &other.to_string());
        out.push(("look_alike", alike));
    }
    if name.contains('_') {
        let mut camel = String::new();
        let mut up = false;
        for c in name.chars() {
            if c == '_' {
                up = true;
            } else if up {
                camel.extend(c.to_uppercase());
                up = false;
            } else {
                camel.push(c);
            }
        }
        out.push(("camel_case", camel));
    }
    out.retain(|(_, s)| s != name);
    out.dedup_by(|a, b| a.1 == b.1);
    out
}

impl Variants<'_, '_, '_> {
    fn push_value(&mut self, location: &str, suffix: &str, doc: &Value, canaries: Vec<String>) {
        let bytes = serde_json::to_vec(doc).unwrap_or_default();
        self.f
            .push(location, suffix, bytes, canaries, Expectation::Reference);
    }

    /// The mappings whose source member this document has.
    fn present(&self) -> Vec<&'_ Mapping> {
        self.vendor
            .map
            .iter()
            .filter(|m| m.from.resolve(self.doc).is_some())
            .collect()
    }

    /// vendor-unmapped: every member no mapping reads (nor holds a mapped one) set to a
    /// canary string, and every unmapped object given a canary member: admitted or not,
    /// the canary never reaches the agent.
    fn unmapped(&mut self) {
        self.f.class = "vendor-unmapped";
        let mapped: Vec<String> = self
            .vendor
            .map
            .iter()
            .map(|m| m.from.as_str().to_owned())
            .chain(self.vendor.failure.iter().map(|r| r.at.as_str().to_owned()))
            .collect();
        let on_mapped_path = |pointer: &str| {
            mapped
                .iter()
                .any(|m| m == pointer || m.starts_with(&format!("{pointer}/")))
        };
        for (parent, name) in member_pointers(self.doc) {
            let location = format!("{parent}/{}", escape_token(&name));
            if on_mapped_path(&location) {
                continue;
            }
            let token = self.f.canary(&location, 0);
            if let Some(d) = edit(self.doc, &location, Some(Value::String(token.clone()))) {
                self.push_value(&location, "canary_value", &d, vec![token]);
            }
        }
    }

    /// vendor-near-name: every mapped member's name spelled almost right (re-cased, title
    /// case, padded, a look-alike letter, camelCase), in place of the member (the mapping
    /// must fail closed) and beside it with a canary value (never mapped); the member
    /// renamed to a canary name.
    fn near_names(&mut self) {
        self.f.class = "vendor-near-name";
        let present: Vec<Mapping> = self.present().into_iter().cloned().collect();
        for mapping in present {
            let location = mapping.from.as_str().to_owned();
            let Some(name) = mapping.from.tokens().last().cloned() else {
                continue;
            };
            let parent = location
                .rsplit_once('/')
                .map_or(String::new(), |(p, _)| p.to_owned());
            let token = self.f.canary(&location, 0);
            for (kind, spelled) in near_spellings(&name) {
                if let Some(d) = renamed(self.doc, &location, &spelled) {
                    self.push_value(&location, &format!("{kind}:instead"), &d, vec![]);
                }
                let beside = format!("{parent}/{}", escape_token(&spelled));
                if let Some(d) = edit(self.doc, &beside, Some(Value::String(token.clone()))) {
                    self.push_value(
                        &location,
                        &format!("{kind}:beside"),
                        &d,
                        vec![token.clone()],
                    );
                }
            }
            let other = self.f.canary(&location, 1);
            if let Some(d) = renamed(self.doc, &location, &other) {
                self.push_value(&location, "renamed_canary", &d, vec![other]);
            }
        }
    }

    /// vendor-coerce: every mapped member's value in a type its normalisation (or a lax
    /// reader) might coerce: an integer as a decimal string, a fraction or raw `7.0`; a
    /// table key re-cased, title-cased, padded, or a table value instead; a time as
    /// epoch seconds (a number and a string) or with a space for `T`; any value in an
    /// array (with a canary beside it) or an object, null, a boolean.
    fn coerced(&mut self) {
        self.f.class = "vendor-coerce";
        let present: Vec<Mapping> = self.present().into_iter().cloned().collect();
        for mapping in present {
            let location = mapping.from.as_str().to_owned();
            let Some(original) = mapping.from.resolve(self.doc).cloned() else {
                continue;
            };
            let token = self.f.canary(&location, 0);
            let mut values: Vec<(String, Value, Vec<String>)> = vec![
                ("array".into(), json!([original.clone()]), vec![]),
                (
                    "array_with_canary".into(),
                    json!([original.clone(), token.clone()]),
                    vec![token.clone()],
                ),
                (
                    "object_with_canary".into(),
                    json!({ "value": original.clone(), "note": token.clone() }),
                    vec![token.clone()],
                ),
                ("null".into(), Value::Null, vec![]),
                ("bool".into(), json!(true), vec![]),
            ];
            let mut raw: Vec<(String, String)> = Vec::new();
            let mut plain: Vec<(String, Value)> = Vec::new();
            match (&original, &mapping.normalise) {
                (Value::Number(n), _) => {
                    plain.push(("decimal_string".into(), json!(n.to_string())));
                    plain.push(("fraction_string".into(), json!(format!("{n}.0"))));
                    plain.push(("padded_string".into(), json!(format!(" {n}"))));
                    raw.push(("fraction".into(), format!("{n}.0")));
                    raw.push(("exponent".into(), format!("{n}e0")));
                }
                (Value::String(s), Normalise::IntegerFromString) => {
                    if let Ok(n) = s.parse::<i64>() {
                        plain.push(("number".into(), json!(n)));
                    }
                    for (kind, text) in [
                        ("leading_zero", format!("0{s}")),
                        ("plus_sign", format!("+{s}")),
                        ("fraction", format!("{s}.0")),
                    ] {
                        plain.push((kind.into(), json!(text)));
                    }
                }
                (Value::String(s), Normalise::Table(table)) => {
                    let upper = s.to_uppercase();
                    let mut title: String =
                        s.chars().take(1).flat_map(char::to_uppercase).collect();
                    title.extend(s.chars().skip(1));
                    for (kind, text) in [
                        ("upper_case", upper),
                        ("title_case", title),
                        ("trailing_space", format!("{s} ")),
                    ] {
                        if text != *s && !table.contains_key(&text) {
                            plain.push((kind.into(), json!(text)));
                        }
                    }
                    if let Some(v) = table.get(s).and_then(Value::as_str) {
                        if !table.contains_key(v) {
                            plain.push(("table_value".into(), json!(v)));
                        }
                    }
                }
                (Value::String(s), Normalise::Lowercase) => {
                    plain.push(("upper_case".into(), json!(s.to_uppercase())));
                    plain.push(("dotted_capital_i".into(), json!(format!("{s}\u{130}"))));
                }
                (Value::String(s), _) => {
                    if let Ok(time) = s.parse::<airlock_guard::jiff::Timestamp>() {
                        plain.push(("epoch_seconds".into(), json!(time.as_second())));
                        plain.push((
                            "epoch_seconds_string".into(),
                            json!(time.as_second().to_string()),
                        ));
                        plain.push(("epoch_milliseconds".into(), json!(time.as_millisecond())));
                        if s.len() > 10 && s.as_bytes()[10] == b'T' {
                            plain.push((
                                "space_for_t".into(),
                                json!(format!("{} {}", &s[..10], &s[11..])),
                            ));
                        }
                    }
                    if let Ok(n) = s.parse::<i64>() {
                        plain.push(("number".into(), json!(n)));
                    }
                }
                _ => {}
            }
            values.extend(plain.into_iter().map(|(k, v)| (k, v, vec![])));
            for (kind, value, canaries) in values {
                if value == original {
                    continue;
                }
                if let Some(d) = edit(self.doc, &location, Some(value)) {
                    self.push_value(&location, &kind, &d, canaries);
                }
            }
            for (kind, text) in raw {
                if let Some(bytes) = splice(self.doc, &location, text.as_bytes()) {
                    self.f.push(
                        &location,
                        &format!("raw:{kind}"),
                        bytes,
                        vec![],
                        Expectation::Reference,
                    );
                }
            }
        }
    }

    /// vendor-failure: every failure rule's member put beside a document it does not
    /// match (its value, or a canary when any value matches); where it matches, its value
    /// nearly equal (re-cased, padded, a prefix, a number, null) and the matched member
    /// beside mapped members.
    fn failure_edges(&mut self) {
        self.f.class = "vendor-failure";
        let rules: Vec<FailureRule> = self.vendor.failure.clone();
        for (i, rule) in rules.iter().enumerate() {
            let location = rule.at.as_str().to_owned();
            let token = self.f.canary(&location, i as u32);
            match rule.at.resolve(self.doc) {
                None => {
                    let (value, canaries) = match &rule.equals {
                        Some(v) => (v.clone(), vec![]),
                        None => (Value::String(token.clone()), vec![token.clone()]),
                    };
                    if let Some(d) = edit(self.doc, &location, Some(value)) {
                        self.push_value(
                            &location,
                            &format!("rule_{i}:beside_document"),
                            &d,
                            canaries,
                        );
                    }
                }
                Some(found) => {
                    let Some(Value::String(s)) = rule.equals.as_ref().or(Some(found)) else {
                        continue;
                    };
                    let mut chars = s.chars();
                    chars.next_back();
                    let near = [
                        ("recased", json!(s.to_lowercase())),
                        ("upper_case", json!(s.to_uppercase())),
                        ("trailing_space", json!(format!("{s} "))),
                        ("prefix", json!(chars.as_str())),
                        ("with_canary", json!(format!("{s} {token}"))),
                        ("number", json!(404)),
                        ("null", Value::Null),
                        ("array", json!([s])),
                    ];
                    for (kind, value) in near {
                        if value == *found {
                            continue;
                        }
                        let canaries = if kind == "with_canary" {
                            vec![token.clone()]
                        } else {
                            vec![]
                        };
                        if let Some(d) = edit(self.doc, &location, Some(value)) {
                            self.push_value(&location, &format!("rule_{i}:{kind}"), &d, canaries);
                        }
                    }
                }
            }
        }
        // A failure document that also carries every mapped member (with canary text
        // where a string is expected).
        let failing = rules.iter().any(|r| r.at.resolve(self.doc).is_some());
        if failing {
            let mut d = self.doc.clone();
            let mut canaries = Vec::new();
            for (n, mapping) in self.vendor.map.iter().enumerate() {
                let location = mapping.from.as_str().to_owned();
                let token = self.f.canary(&location, 100 + n as u32);
                let (parent, name) = location.rsplit_once('/').unwrap_or(("", ""));
                if let Some(Value::Object(map)) = d.pointer_mut(parent) {
                    let name = name.replace("~1", "/").replace("~0", "~");
                    map.entry(name)
                        .or_insert_with(|| Value::String(token.clone()));
                    canaries.push(token);
                }
            }
            self.push_value("", "failure_with_mapped_members", &d, canaries);
        }
    }
}
