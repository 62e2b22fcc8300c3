//! The near misses a user gives (`--near-miss`): read with their requests, a `data`
//! object alone wrapped into the envelope, and, for an envelope scaffold, learned from
//! when the scaffold still admits them (`learn.rs` proposes, a trial guard decides).

use airlock_guard::jiff::Timestamp;
use airlock_guard::{parse, Guard, Request, MAX_DEPTH_CEILING};
use serde_json::{json, Value};
use std::path::PathBuf;

use super::{learn, read_given, InitError, Scaffold};

/// A guard of the scaffold for a data schema and freshness windows.
pub(super) type TrialGuard<'a> =
    dyn Fn(&Value, &[learn::FreshBounds]) -> Result<Guard, InitError> + 'a;

/// What learning from near misses works with: the samples, their instants and accepted
/// bodies, and a guard of the scaffold for a schema and freshness windows.
pub(super) struct Learning<'a> {
    pub(super) data: &'a [Value],
    pub(super) nows: &'a [Timestamp],
    pub(super) accepted_bodies: &'a [(Vec<u8>, &'a Request)],
    pub(super) trial: &'a TrialGuard<'a>,
}

/// What the given near misses taught: the data schema and freshness windows, and the near
/// misses the scaffold now rejects (the fixtures to write).
pub(super) struct Learned {
    pub(super) data_schema: Value,
    pub(super) fresh: Vec<learn::FreshBounds>,
    pub(super) rejected: Vec<NearMiss>,
}

/// Learn from each given near miss the scaffold admits the first candidate that makes
/// the guard reject it while still admitting every sample; one it cannot learn from is
/// left for review (and not written).
pub(super) fn learn_from_near_misses(
    given: Vec<NearMiss>,
    data_schema: Value,
    learning: &Learning<'_>,
    scaffold: &mut Scaffold,
) -> Result<Learned, InitError> {
    let mut learned = Learned {
        data_schema,
        fresh: Vec::new(),
        rejected: Vec::new(),
    };
    for near in given {
        let guard = (learning.trial)(&learned.data_schema, &learned.fresh)?;
        if !guard.admit(&near.request, &near.bytes).is_admitted() {
            learned.rejected.push(near);
            continue;
        }
        match learn_one(&near, &learned, learning) {
            Some((candidate, schema, bounds)) => {
                scaffold.inferred.push(format!(
                    "{}: learned from near miss {}",
                    candidate.describe(),
                    near.name
                ));
                learned.data_schema = schema;
                learned.fresh = bounds;
                learned.rejected.push(near);
            }
            None => scaffold.review.push(format!(
                "near miss {} is admitted and nothing learned from it rejects it (it was not \
                 written): tighten the contract by hand",
                near.name
            )),
        }
    }
    Ok(learned)
}

/// The first candidate learned from an admitted near miss (its `data`, or the object
/// alone) whose schema and windows reject it and keep every sample.
fn learn_one(
    near: &NearMiss,
    learned: &Learned,
    learning: &Learning<'_>,
) -> Option<(learn::Tightening, Value, Vec<learn::FreshBounds>)> {
    let ours = parse(&near.bytes, MAX_DEPTH_CEILING).ok().and_then(|v| {
        match v.get("outcome").and_then(Value::as_str) {
            Some("success") => v.get("data").cloned(),
            Some(_) => None,
            None => v.is_object().then_some(v),
        }
    });
    ours.and_then(|ours| {
        learn::candidates(
            learning.data,
            learning.nows,
            &ours,
            near.request.now,
            &learned.data_schema,
        )
        .into_iter()
        .find_map(|candidate| {
            let (mut schema, mut bounds) = (learned.data_schema.clone(), learned.fresh.clone());
            candidate.apply(&mut schema, &mut bounds);
            let guard = (learning.trial)(&schema, &bounds).ok()?;
            let samples_kept = learning
                .accepted_bodies
                .iter()
                .all(|(body, r)| guard.admit(r, body).is_admitted());
            (samples_kept && !guard.admit(&near.request, &near.bytes).is_admitted())
                .then_some((candidate, schema, bounds))
        })
    })
}

/// A near miss the user gave: its name, bytes and the request it answers.
pub(super) struct NearMiss {
    pub(super) name: String,
    pub(super) bytes: Vec<u8>,
    pub(super) request: Request,
}

/// The near misses given, each with its own request (`NAME.request.json` beside it, else
/// `request`); when `wrap`, one given as the `data` object alone is wrapped like a sample
/// (a vendor document or a command's output is the raw input as it is).
pub(super) fn read_near_misses(
    tool: &str,
    paths: &[PathBuf],
    request: &Request,
    wrap: bool,
) -> Result<Vec<NearMiss>, InitError> {
    let mut out = Vec::new();
    // An envelope's near miss keeps its name; a raw one loses any extension.
    let what = "a near miss is a response, at most 64 MiB";
    for given in read_given(paths, request, !wrap, what) {
        let given = given?;
        let bytes = if wrap {
            as_response(tool, &given.request, given.bytes)
        } else {
            given.bytes
        };
        out.push(NearMiss {
            name: given.name,
            bytes,
            request: given.request,
        });
    }
    Ok(out)
}

/// A near miss as a whole response: one given as the `data` object alone (a JSON
/// object without `outcome`, as a sample may be) wrapped into the success envelope around
/// its own bytes, so its oddities (a duplicate member, a number's spelling) are kept;
/// an envelope, or anything that is not a JSON object, as it is.
fn as_response(tool: &str, request: &Request, bytes: Vec<u8>) -> Vec<u8> {
    let data_alone = serde_json::from_slice::<Value>(&bytes)
        .is_ok_and(|v| v.as_object().is_some_and(|o| !o.contains_key("outcome")));
    if !data_alone {
        return bytes;
    }
    let head = json!({"tool": tool, "request_id": request.request_id, "outcome": "success"});
    let mut out = serde_json::to_vec(&head).unwrap_or_default();
    out.pop(); // its closing brace
    out.extend_from_slice(b",\"data\":");
    out.extend_from_slice(&bytes);
    out.push(b'}');
    out
}
