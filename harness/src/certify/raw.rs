//! Witnesses of a contract-schema change for contracts whose raw response is not the
//! envelope (`[input] kind = "lines"` or `"vendor"`): the envelope the algebra found is
//! written back as what the upstream sends — the command's text through the line grammar,
//! or an accepted fixture's vendor document with the mapped members replaced — by
//! inverting each mapping's normalisation, and kept only when the two **whole guards**
//! judge those bytes differently. Otherwise the change keeps its class without a witness
//! (structural), and the fixtures' replay still counts.
//!
//! The failures of these contracts come from the failure rules (a vendor error shape) and
//! are never judged by the contract schema (a command's text has none): a change only a
//! failure envelope shows, or at `/error`, admits and rejects no response — compatible.

use airlock_guard::{CheckSpec, Contract, Guard, InputKind, Mapping, Normalise, Request};
use serde_json::{Map, Value};

use super::{set_at, Certificate, Class, Evidence, Witness};
use crate::corpus::{Corpus, Expect};

/// Rewrite every witness of `certificate` as raw upstream bytes both guards confirm, or
/// drop it. Envelope and MCP contracts are left as they are.
pub(super) fn rewrite(
    certificate: &mut Certificate,
    old: &Contract,
    new: &Contract,
    corpus: &Corpus,
) {
    let (map, lines) = match new.input() {
        InputKind::Lines(l) => (&l.map, Some(l)),
        InputKind::Vendor(v) => (&v.map, None),
        _ => return,
    };
    let guards = (Guard::new(old.clone()), Guard::new(new.clone()));
    // The accepted fixtures' sources: the command's key values, or the vendor documents.
    let sources: Vec<(Value, &Request)> = corpus
        .fixtures
        .iter()
        .filter(|f| f.expect == Expect::Accept)
        .filter_map(|f| {
            let source = match lines {
                Some(l) => Value::Object(read_lines(&f.bytes, l)?),
                None => serde_json::from_slice(&f.bytes).ok()?,
            };
            Some((source, &f.request))
        })
        .collect();
    for change in &mut certificate.changes {
        let failure_only = change.pointer == "/error"
            || change.pointer.starts_with("/error/")
            || change.witness.as_ref().is_some_and(|w| {
                w.instance.get("outcome").and_then(Value::as_str) != Some("success")
            });
        if failure_only {
            change.witness = None;
            change.class = Class::Compatible;
            change.evidence = Evidence::Structural;
            change.detail = format!(
                "{} (the guard builds this contract's failures from its failure rules and never judges them by the contract schema: no response changes)",
                change.detail
            );
            continue;
        }
        let Some(w) = change.witness.take() else {
            continue;
        };
        let old_only = w.accepted_by == "old_only";
        let found = sources.iter().find_map(|(source, request)| {
            let raw = write_back(&w.instance, source, map, lines)?;
            let request = bound(request, &w.instance, new.checks());
            let bytes = match &raw {
                Value::String(text) => text.as_bytes().to_vec(),
                doc => serde_json::to_vec(doc).ok()?,
            };
            let verdicts = (
                guards.0.admit(&request, &bytes).is_admitted(),
                guards.1.admit(&request, &bytes).is_admitted(),
            );
            (verdicts == (old_only, !old_only)).then_some(raw)
        });
        match found {
            Some(instance) => {
                change.witness = Some(Witness {
                    accepted_by: w.accepted_by,
                    instance,
                    isolated: w.isolated,
                });
            }
            None => {
                change.evidence = Evidence::Structural;
                change.detail = format!(
                    "{} (the schemas' example could not be written back as {} that both whole guards judge differently)",
                    change.detail,
                    if lines.is_some() { "the command's text" } else { "a vendor document" }
                );
            }
        }
    }
}

/// The object of a command's lines (a simple reading: the guard judges the text later).
fn read_lines(bytes: &[u8], grammar: &airlock_guard::LinesInput) -> Option<Map<String, Value>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let ending = match grammar.line_ending {
        airlock_guard::LineEnding::Lf => "\n",
        airlock_guard::LineEnding::CrLf => "\r\n",
    };
    let mut out = Map::new();
    for line in text.strip_suffix(ending)?.split(ending) {
        let (key, value) = line.split_once(grammar.separator.as_str())?;
        out.insert(key.to_owned(), Value::String(value.to_owned()));
    }
    Some(out)
}

/// The source `envelope`'s data comes from: `source` with every mapped member replaced by
/// its value before normalisation (lines: rendered as text). None when the envelope is
/// not a success or a value has no inverse.
fn write_back(
    envelope: &Value,
    source: &Value,
    map: &[Mapping],
    lines: Option<&airlock_guard::LinesInput>,
) -> Option<Value> {
    let data = envelope.get("data")?.as_object()?;
    let mut out = source.clone();
    if map.is_empty() {
        // A grammar without a mapping: data is the object of the keys.
        out = Value::Object(data.clone());
    }
    for m in map {
        let value = match data.get(&m.field) {
            Some(v) => Some(invert(&m.normalise, v)?),
            None if m.optional => None,
            None => return None,
        };
        if !set_at(&mut out, m.from.as_str(), value) {
            return None;
        }
    }
    let Some(grammar) = lines else {
        return Some(out);
    };
    let ending = match grammar.line_ending {
        airlock_guard::LineEnding::Lf => "\n",
        airlock_guard::LineEnding::CrLf => "\r\n",
    };
    let object = out.as_object()?;
    let mut text = String::new();
    for key in &grammar.keys {
        let value = object.get(key)?.as_str()?;
        text.push_str(&format!("{key}{}{value}{ending}", grammar.separator));
    }
    Some(Value::String(text))
}

/// A value the normalisation turns into `normalised` (the guard checks it).
fn invert(how: &Normalise, normalised: &Value) -> Option<Value> {
    match how {
        Normalise::Table(table) => table
            .iter()
            .find(|(_, v)| *v == normalised)
            .map(|(k, _)| Value::String(k.clone())),
        Normalise::IntegerFromString => Some(Value::String(normalised.as_i64()?.to_string())),
        Normalise::Rfc3339FromEpochSeconds => {
            let at: airlock_guard::jiff::Timestamp = normalised.as_str()?.parse().ok()?;
            Some(Value::from(at.as_second()))
        }
        // The identity, lower-casing and RFC 3339 in UTC keep a value already in their
        // output form.
        _ => Some(normalised.clone()),
    }
}

/// The request with the parameters the binding checks compare set to what the envelope
/// holds, and `now` at a time its freshness checks accept: the witness is about the
/// schema, not about binding.
fn bound(request: &Request, envelope: &Value, checks: &[CheckSpec]) -> Request {
    let mut request = request.clone();
    for check in checks {
        let Some(value) = envelope.pointer(check.field().as_str()) else {
            continue;
        };
        match check {
            CheckSpec::EqualsParam { param, .. } => {
                request.params.insert(param.clone(), value.clone());
            }
            CheckSpec::InParam { param, .. } => {
                request
                    .params
                    .insert(param.clone(), Value::Array(vec![value.clone()]));
            }
            CheckSpec::Fresh { .. } => {
                if let Some(at) = value.as_str().and_then(|t| t.parse().ok()) {
                    request.now = at;
                }
            }
            _ => {}
        }
    }
    request
}
