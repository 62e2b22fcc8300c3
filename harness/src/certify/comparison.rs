//! The comparison of two schemas as seen through a view: the set algebra both ways, the
//! structural changes settled by witnesses or proofs, what newly reaches the agent, and
//! the merged, classed changes of a certificate.

use super::*;

/// Whole-schema witnesses checked for what reaches the agent.
const MAX_VISIBILITY_WITNESSES: usize = 6;
/// Structural changes past which the set algebra is not asked (see `beyond_the_algebra`).
const MAX_ALGEBRA_CHANGES: usize = 32;
/// `enum` values past which the set algebra is not asked.
const MAX_ALGEBRA_ENUM: usize = 10_000;
/// Agent fields the algebra is asked about per newly admitted witness (each question
/// intersects the whole old version); the others are left undecided.
const MAX_FIELD_QUESTIONS: usize = 64;
/// A difference schema longer than this (as JSON text) is not generated from (a
/// SchemaStore-sized one runs to megabytes); the structural witnesses and the bases
/// still apply.
const MAX_DIFFERENCE_BYTES: usize = 256 * 1024;

/// The comparison of two compiled schemas as seen through `view`; `bases` are instances
/// to edit into witnesses (the fixtures' instances). Deterministic.
pub fn compare(
    tool: &str,
    old: &CompiledSchema,
    new: &CompiledSchema,
    view: &View,
    bases: Vec<Value>,
) -> Certificate {
    let (od, nd) = (old.document(), new.document());
    let judge = Judge::new(old, new);
    let bases = judge.bases(bases);
    let structural = merged(structural::diff_view(od, nd, view));
    let canonical = canonical_pair(od, nd, &structural);
    let ((rejected, rejected_schema), (admitted, admitted_schema)) =
        differences(od == nd, &canonical);
    let mut semantic = Semantic {
        newly_rejected: rejected.clone(),
        newly_admitted: admitted.clone(),
        dropped: 0,
    };
    let mut changes = settle_structural(
        structural,
        &judge,
        &bases,
        view,
        (&rejected, &admitted),
        &mut semantic,
    );
    if !proved(&rejected) {
        newly_rejected(
            &judge,
            &bases,
            view,
            (&rejected, rejected_schema.as_ref()),
            &mut changes,
        );
    }
    if !proved(&admitted) {
        let old_canonical = canonical.as_ref().ok().map(|c| &c.0);
        newly_admitted(
            &judge,
            &bases,
            view,
            (&admitted, admitted_schema.as_ref()),
            (old_canonical, od),
            &mut changes,
        );
    }
    let both_proved = proved(&rejected) && proved(&admitted);
    if changes.is_empty() && od != nd && !both_proved {
        changes.push(Change {
            class: Class::Unknown,
            kind: "undecided",
            pointer: String::new(),
            detail: format!(
                "the documents differ; the algebra could not decide (newly rejected: {}, newly admitted: {}) and no structural rule describes the difference",
                rejected.as_str(),
                admitted.as_str()
            ),
            evidence: Evidence::Structural,
            witness: None,
            focus: Focus::Location,
        });
    }
    let mut certificate = Certificate {
        tool: tool.to_owned(),
        from: json!({"sha256": old.sha256()}),
        to: json!({"sha256": new.sha256()}),
        verdict: Class::Compatible,
        evidence: Evidence::Structural,
        semantic,
        changes,
        fixtures: Vec::new(),
    };
    certificate.settle(od == nd || both_proved);
    certificate
}

/// The two canonical forms of the set algebra (the versions on two threads), or why the
/// algebra is not asked (the same document, or beyond its bounds).
fn canonical_pair(
    od: &Value,
    nd: &Value,
    structural: &[Change],
) -> Result<(CanonicalSchema, CanonicalSchema), String> {
    if od == nd {
        Err("the same document".to_owned())
    } else if let Some(reason) = beyond_the_algebra(structural, od, nd) {
        Err(reason)
    } else {
        std::thread::scope(|scope| {
            let old = scope.spawn(|| semantic::canonical(od).map_err(|e| e.to_string()));
            let new = semantic::canonical(nd).map_err(|e| e.to_string());
            let old = old
                .join()
                .unwrap_or_else(|_| Err("the algebra panicked".to_owned()));
            Ok::<_, String>((old?, new?))
        })
    }
}

/// An answer of the algebra and the difference schema it found.
type Difference = (Existence, Option<Value>);

/// The differences both ways (newly rejected, newly admitted), on two threads: none for
/// the same document, refused when the algebra is not asked.
fn differences(
    same: bool,
    canonical: &Result<(CanonicalSchema, CanonicalSchema), String>,
) -> (Difference, Difference) {
    match canonical {
        // The same document admits the same instances.
        _ if same => ((Existence::No, None), (Existence::No, None)),
        Ok((o, n)) => std::thread::scope(|scope| {
            let rejected = scope.spawn(|| semantic::difference(o, n, MAX_DIFFERENCE_BYTES));
            let admitted = semantic::difference(n, o, MAX_DIFFERENCE_BYTES);
            let rejected = rejected
                .join()
                .unwrap_or_else(|_| (Existence::Refused("the algebra panicked".to_owned()), None));
            (rejected, admitted)
        }),
        Err(reason) => (
            (Existence::Refused(reason.clone()), None),
            (Existence::Refused(reason.clone()), None),
        ),
    }
}

/// Whether the algebra proved the difference empty.
fn proved(answer: &Existence) -> bool {
    *answer == Existence::No
}

/// Whether a change of `class` already has a witness.
fn witnessed(class: Class, changes: &[Change]) -> bool {
    changes
        .iter()
        .any(|c| c.class == class && c.evidence == Evidence::Witness)
}

/// Structural changes, each with a witness when one is found (an unknown class then
/// follows the witness's side); a change the proofs contradict is an artefact of reading
/// the documents and is dropped (counted in `semantic`).
fn settle_structural(
    structural: Vec<Change>,
    judge: &Judge<'_>,
    bases: &[Value],
    view: &View,
    (rejected, admitted): (&Existence, &Existence),
    semantic: &mut Semantic,
) -> Vec<Change> {
    let mut changes = Vec::new();
    for mut change in structural {
        let witness = judge.structural_witness(&change, bases);
        match witness {
            Some(w) => {
                if change.class == Class::Unknown {
                    change.class = if w.accepted_by == "old_only" {
                        narrowed(view)
                    } else {
                        view.loosened(&change.pointer)
                    };
                }
                change.evidence = Evidence::Witness;
                change.witness = Some(w);
            }
            None => {
                let narrowing = matches!(change.class, Class::Breaking);
                let widening = matches!(change.class, Class::AgentVisible | Class::Compatible);
                if (narrowing && proved(rejected))
                    || (widening && proved(admitted))
                    || (change.class == Class::Unknown && proved(rejected) && proved(admitted))
                {
                    semantic.dropped += 1;
                    continue;
                }
                if change.class == Class::Unknown && proved(rejected) {
                    // Only the widening side is left open.
                    change.class = view.loosened(&change.pointer);
                }
            }
        }
        changes.push(change);
    }
    changes
}

/// The whole schema, newly rejected: a witness from the difference, the fixtures, the
/// schema's own values; undecided without one unless a narrowing is already shown.
fn newly_rejected(
    judge: &Judge<'_>,
    bases: &[Value],
    view: &View,
    (rejected, rejected_schema): (&Existence, Option<&Value>),
    changes: &mut Vec<Change>,
) {
    let pool = rejected_schema
        .map(|d| generate::candidates(d, d, 11))
        .unwrap_or_default();
    let found = judge.separating(pool.into_iter().chain(bases.iter().cloned()), true, 1);
    let class = narrowed(view);
    match found.into_iter().next() {
        Some(instance) if !witnessed(class, changes) => changes.push(Change {
            class,
            kind: "newly_rejected",
            pointer: String::new(),
            detail: match view.direction {
                Direction::Response => "a response the old version admitted is rejected now".into(),
                Direction::Request => "arguments the old version accepted are rejected now".into(),
            },
            evidence: Evidence::Witness,
            witness: Some(Witness {
                accepted_by: "old_only",
                instance,
                isolated: true,
            }),
            focus: Focus::Location,
        }),
        Some(_) => {}
        // Undecided, and no witness settled it: never taken for "nothing rejected"
        // (a narrowing the documents show already makes the verdict breaking).
        None if !changes.iter().any(|c| c.class == Class::Breaking) => {
            changes.push(Change {
                class: Class::Unknown,
                kind: "newly_rejected",
                pointer: String::new(),
                detail: if *rejected == Existence::Yes {
                    "the algebra finds instances the new version rejects, but no witness was confirmed by both guards".into()
                } else {
                    format!(
                        "the algebra could not decide whether anything the old version admitted is rejected now ({}), and no witness was found",
                        rejected.as_str()
                    )
                },
                evidence: Evidence::Structural,
                witness: None,
                focus: Focus::Location,
            });
        }
        None => {}
    }
}

/// Newly admitted: what of it reaches the agent. The most visible of a few witnesses,
/// kept unless a witnessed change already shows as much.
fn newly_admitted(
    judge: &Judge<'_>,
    bases: &[Value],
    view: &View,
    (admitted, admitted_schema): (&Existence, Option<&Value>),
    (old_canonical, od): (Option<&CanonicalSchema>, &Value),
    changes: &mut Vec<Change>,
) {
    let pool = admitted_schema
        .map(|d| generate::candidates(d, d, 12))
        .unwrap_or_default();
    let found = judge.separating(
        pool.into_iter().chain(bases.iter().cloned()),
        false,
        MAX_VISIBILITY_WITNESSES,
    );
    let chosen = most_visible(view, found, (old_canonical, od));
    let strongest_witnessed = changes
        .iter()
        .filter(|c| {
            c.evidence == Evidence::Witness
                && c.witness
                    .as_ref()
                    .is_some_and(|w| w.accepted_by == "new_only")
        })
        .map(|c| c.class)
        .min();
    match chosen {
        // What is newly admitted reaches at most agent-visible: once a witnessed change
        // shows that, an undecided visibility adds nothing.
        Some((class, detail, instance))
            if strongest_witnessed.is_none_or(|s| class < s && s != Class::AgentVisible) =>
        {
            changes.push(Change {
                class,
                kind: "newly_admitted",
                pointer: String::new(),
                detail,
                evidence: Evidence::Witness,
                witness: Some(Witness {
                    accepted_by: "new_only",
                    instance,
                    isolated: true,
                }),
                focus: Focus::Location,
            });
        }
        Some(_) => {}
        None if *admitted == Existence::Yes && strongest_witnessed.is_none() => changes.push(Change {
            class: if view.direction == Direction::Request { Class::Compatible } else { Class::Unknown },
            kind: "newly_admitted",
            pointer: String::new(),
            detail: "the algebra finds instances only the new version admits, but no witness was confirmed by both guards".into(),
            evidence: Evidence::Structural,
            witness: None,
            focus: Focus::Location,
        }),
        None => {}
    }
}

/// The newly admitted witness that shows the most (the first agent-visible one ends the
/// search), with its class and detail.
fn most_visible(
    view: &View,
    found: Vec<Value>,
    (old_canonical, od): (Option<&CanonicalSchema>, &Value),
) -> Option<(Class, String, Value)> {
    let mut chosen: Option<(Class, String, Value)> = None;
    for instance in found {
        let (class, detail) = match view.direction {
            Direction::Request => (
                Class::Compatible,
                "arguments the old version rejected are accepted now".to_owned(),
            ),
            Direction::Response => visibility(view, &instance, old_canonical, od),
        };
        if chosen.as_ref().is_none_or(|(c, _, _)| class < *c) {
            chosen = Some((class, detail, instance));
        }
        if chosen
            .as_ref()
            .is_some_and(|(c, _, _)| *c == Class::AgentVisible)
        {
            break;
        }
    }
    chosen
}

/// Why the set algebra is not asked about two versions, when its cost would not be
/// bounded by their size: it grows with the cube of the locations that change (their
/// negations are distributed over each other; 100 members changing type cost 2.3 GB) and
/// with the square of an `enum`'s values. The verdict then rests on the structural
/// changes, their witnesses and the fixtures; the certificate says why.
fn beyond_the_algebra(changes: &[Change], old: &Value, new: &Value) -> Option<String> {
    if changes.len() > MAX_ALGEBRA_CHANGES {
        return Some(format!(
            "{} locations change, more than the {MAX_ALGEBRA_CHANGES} the algebra is asked about",
            changes.len()
        ));
    }
    let longest = longest_enum(old).max(longest_enum(new));
    (longest > MAX_ALGEBRA_ENUM).then(|| {
        format!("an enum of {longest} values, more than the {MAX_ALGEBRA_ENUM} the algebra is asked about")
    })
}

/// The number of values of the longest `enum` array anywhere in `document`.
fn longest_enum(document: &Value) -> usize {
    let mut longest = 0;
    let mut todo = vec![document];
    while let Some(v) = todo.pop() {
        match v {
            Value::Object(map) => {
                if let Some(Value::Array(values)) = map.get("enum") {
                    longest = longest.max(values.len());
                }
                todo.extend(map.values());
            }
            Value::Array(items) => todo.extend(items),
            _ => {}
        }
    }
    longest
}

/// Changes that are one edit seen at many locations (a definition reached along several
/// paths): the same class, kind, detail and member name, kept once at the first
/// location, the others counted in the detail.
fn merged(changes: Vec<Change>) -> Vec<Change> {
    let mut out: Vec<(Change, usize)> = Vec::new();
    let mut seen: std::collections::HashMap<(Class, &'static str, String, String), usize> =
        std::collections::HashMap::new();
    for change in changes {
        let last = change.pointer.rsplit('/').next().unwrap_or_default();
        let key = (
            change.class,
            change.kind,
            change.detail.clone(),
            last.to_owned(),
        );
        match seen.get(&key) {
            Some(&at) => out[at].1 += 1,
            None => {
                seen.insert(key, out.len());
                out.push((change, 0));
            }
        }
    }
    out.into_iter()
        .map(|(mut change, more)| {
            if more > 0 {
                change.detail = format!(
                    "{} (the same change at {more} more location{})",
                    change.detail,
                    if more == 1 { "" } else { "s" }
                );
            }
            change
        })
        .collect()
}

/// The class of a narrowing: a response rejected now breaks; so do arguments.
fn narrowed(_view: &View) -> Class {
    Class::Breaking
}

/// What a newly admitted response shows the agent: an agent field holding a value (or
/// absent where) the old version never let through, a forwarded failure code it never
/// let through — each a question to the algebra about the old version. `old` is the old
/// version canonicalized (none: the algebra refused it).
fn visibility(
    view: &View,
    instance: &Value,
    old: Option<&jsonschema::canonical::CanonicalSchema>,
    old_document: &Value,
) -> (Class, String) {
    if view.agent.iter().any(String::is_empty) && !view.envelope {
        return (
            Class::AgentVisible,
            "the whole instance is the agent's view: it can now receive an instance the old version rejected".into(),
        );
    }
    let dialect = old_document.get("$schema");
    let mut questions: Vec<(String, Vec<Value>, String)> = Vec::new();
    if view.envelope {
        match instance.get("outcome").and_then(Value::as_str) {
            Some("success") => {
                for field in &view.agent {
                    questions.push(field_question(
                        field,
                        instance,
                        Some(semantic::outcome("success")),
                    ));
                }
            }
            Some("failure") => {
                let code = instance.pointer(FAILURE_CODE).and_then(Value::as_str);
                match code.filter(|c| ErrorCode::from_wire(c).is_some()) {
                    Some(code) => questions.push((
                        FAILURE_CODE.to_owned(),
                        vec![
                            semantic::outcome("failure"),
                            semantic::at(FAILURE_CODE, json!({"const": code})),
                        ],
                        format!("the guard forwards failure code {code:?}, which the old version never let through"),
                    )),
                    None => {
                        return (
                            Class::Compatible,
                            "a failure whose code the guard does not forward: the agent sees INVALID_RESPONSE as before".into(),
                        )
                    }
                }
            }
            _ => {
                return (
                    Class::Compatible,
                    "not an envelope the guard projects: the agent sees INVALID_RESPONSE as before"
                        .into(),
                )
            }
        }
    } else {
        for field in &view.agent {
            questions.push(field_question(field, instance, None));
        }
    }
    let Some(old) = old else {
        return (
            Class::Unknown,
            "newly admitted; whether it reaches the agent is undecided (the algebra refused the old version)".into(),
        );
    };
    let mut undecided = Vec::new();
    for (i, (pointer, question, detail)) in questions.into_iter().enumerate() {
        if i >= MAX_FIELD_QUESTIONS {
            undecided.push(pointer);
            continue;
        }
        match semantic::restricted(old, &question, dialect).0 {
            Existence::No => return (Class::AgentVisible, format!("{pointer}: {detail}")),
            Existence::Yes => {}
            Existence::Unknown | Existence::Refused(_) => undecided.push(pointer),
        }
    }
    if undecided.is_empty() {
        (
            Class::Compatible,
            "newly admitted, but every agent field of the witness holds what the old version also let through: the difference lies outside the agent's view".into(),
        )
    } else {
        (
            Class::Unknown,
            format!(
                "newly admitted; undecided whether {}{} can reach the agent",
                undecided[..undecided.len().min(16)].join(", "),
                match undecided.len().saturating_sub(16) {
                    0 => String::new(),
                    more => format!(" and {more} more agent fields"),
                }
            ),
        )
    }
}

/// The question "could the old version put this field's value (or its absence) here?".
fn field_question(
    field: &str,
    instance: &Value,
    gate: Option<Value>,
) -> (String, Vec<Value>, String) {
    let mut question: Vec<Value> = gate.into_iter().collect();
    let detail = match instance.pointer(field) {
        Some(v) => {
            question.push(semantic::at(field, json!({"const": v})));
            let mut shown = v.to_string();
            if shown.len() > 80 {
                shown = format!("{}…", shown.chars().take(80).collect::<String>());
            }
            format!("the agent field holds {shown}, which the old version never let through")
        }
        None => {
            question.push(semantic::absent(field));
            "the agent field is absent, which the old version never allowed".to_owned()
        }
    };
    (field.to_owned(), question, detail)
}
