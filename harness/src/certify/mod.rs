//! `airlock certify`: what changes between two versions of a schema, judged by what the
//! guard lets through. The versions are compared semantically first (jsonschema's set
//! algebra: a `No` is a proof, a `Yes` needs a witness), structurally by instance location
//! otherwise, and a contract's fixtures are replayed under both; every change says which of
//! proof / witness / replay / structural backs it, and a witness is only an instance the
//! guard's compiled schemas of both versions really judge differently.
//!
//! Classes (docs/certify.md): **breaking** — a response admitted before is rejected now;
//! **agent_visible** — the agent can now receive a value or a shape it could not before
//! (through an agent field, or a failure code the guard forwards); **unknown** — nothing
//! decides; **compatible** — proved, or every difference invisible to the agent.

mod generate;
mod pattern;
mod raw;
pub mod reports;
mod semantic;
mod structural;
mod tools;
mod values;
mod vendor;
mod view;
mod witness;

use airlock_guard::{CompiledSchema, Contract, ErrorCode, Guard, InputKind};
use jsonschema::canonical::CanonicalSchema;
use serde::Serialize;
use serde_json::{json, Value};
use std::path::Path;

use crate::base::error::CheckError;
use crate::base::pointer::set_at;
use crate::corpus::{find_corpus, Corpus};
pub use semantic::Existence;
pub use structural::diff;
pub use tools::{certify_tools_lists, ToolChange, ToolsCertificate};
pub use vendor::certify_vendor;
use view::FAILURE_CODE;
pub use view::{Direction, View};
use witness::{candidates, Judge};

/// How a change affects those who depend on the contract, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// A response admitted before is rejected now (for a request: arguments accepted
    /// before are rejected now).
    Breaking,
    /// Nothing decides: neither a proof nor a witness, and no structural rule that holds.
    Unknown,
    /// The agent can now receive a value or a shape it could not before.
    AgentVisible,
    /// Proved unchanged, or every difference invisible to the agent.
    Compatible,
}

impl Class {
    /// The class's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Breaking => "breaking",
            Class::Unknown => "unknown",
            Class::AgentVisible => "agent_visible",
            Class::Compatible => "compatible",
        }
    }
}

/// What backs a change (or a verdict).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// The set algebra proved it (an empty difference).
    Proof,
    /// An instance the two versions' guards judge differently.
    Witness,
    /// A fixture of the corpus, replayed under both versions.
    Replay,
    /// Only the structural comparison of the schema documents.
    Structural,
}

impl Evidence {
    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::Proof => "proof",
            Evidence::Witness => "witness",
            Evidence::Replay => "replay",
            Evidence::Structural => "structural",
        }
    }
}

/// An instance that only one of the two versions accepts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Witness {
    /// `old_only` or `new_only`: which version accepts it.
    pub accepted_by: &'static str,
    /// The instance (for an MCP tool, the `structuredContent`).
    pub instance: Value,
    /// Whether the edit at the change's location is what flips a verdict (relative to
    /// the instance it was made from); generated instances are isolated by construction.
    pub isolated: bool,
}

/// One change between the versions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Its class.
    pub class: Class,
    /// What changed (`new_required_member`, `enum_widened`, `newly_rejected`, …).
    pub kind: &'static str,
    /// The instance location (a JSON pointer into responses; empty: the whole instance).
    pub pointer: String,
    /// Details, for the reviewer.
    pub detail: String,
    /// What backs it.
    pub evidence: Evidence,
    /// An instance confirming the change, when one was found.
    pub witness: Option<Witness>,
    /// What it names at its location beyond its kind, as data: `detail` is prose for
    /// the reviewer and is never read back. Not serialized.
    #[serde(skip)]
    pub focus: Focus,
}

/// What a change names at its location beyond its kind.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub enum Focus {
    /// The location alone (a member, a type, what the algebra or a vendor mapping says).
    #[default]
    Location,
    /// The one keyword at the location that changed (`enum`, `maxLength`, `pattern`, …).
    Keyword(&'static str),
    /// An `anyOf`/`oneOf`/`allOf` branch added or removed, as compared (its `$ref`
    /// followed, annotations dropped, members sorted).
    Branch(Value),
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

/// The algebra's answers for the whole schema, in both directions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Semantic {
    /// Is anything the old version admitted rejected now (`old \ new`)? `no` is a proof.
    pub newly_rejected: Existence,
    /// Is anything admitted now that the old version rejected (`new \ old`)?
    pub newly_admitted: Existence,
    /// Structural findings the proofs showed to be artefacts (not reported).
    pub dropped: usize,
}

/// The certificate of a version change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Certificate {
    /// The contract's tool (in two-file mode, the new file's name).
    pub tool: String,
    /// `{version, sha256}` of the old schema (`{path, sha256}` in two-file mode).
    pub from: Value,
    /// `{version, sha256}` of the new schema.
    pub to: Value,
    /// The strongest class among the changes (`compatible` when there are none).
    pub verdict: Class,
    /// What backs the verdict.
    pub evidence: Evidence,
    /// The set algebra's answers for the whole schema.
    pub semantic: Semantic,
    /// Every change found.
    pub changes: Vec<Change>,
    /// Every fixture under both versions (none in two-file mode).
    pub fixtures: Vec<Replay>,
}

/// Compare versions `from` and `to` of the contract in `dir`, its corpus found beside it.
///
/// # Errors
///
/// When either version or the corpus cannot be loaded.
pub fn certify(dir: &Path, from: u32, to: u32) -> Result<Certificate, CheckError> {
    certify_contract(dir, from, to, None)
}

/// [`certify`] with the corpus folder given (`--corpus DIR`) or found beside the
/// contract (`corpora/<tool>` beside `schemas/<tool>`).
///
/// # Errors
///
/// When either version or the corpus cannot be loaded (a missing corpus names the folders
/// tried).
pub fn certify_contract(
    dir: &Path,
    from: u32,
    to: u32,
    corpus: Option<&Path>,
) -> Result<Certificate, CheckError> {
    let load = |version: u32| {
        Contract::load_version(dir, version).map_err(|source| CheckError::Contract {
            dir: dir.to_path_buf(),
            source,
        })
    };
    let (old, new) = (load(from)?, load(to)?);
    let corpus = find_corpus(&new, corpus).map_err(|source| CheckError::Corpus {
        dir: dir.to_path_buf(),
        source,
    })?;
    let mcp = matches!(new.input(), InputKind::Mcp(_));
    // The guard builds the envelope of a vendor document or a command's text itself:
    // their fixtures are no instances of the contract schema.
    let built = matches!(new.input(), InputKind::Vendor(_) | InputKind::Lines(_));
    // What the schema judges: the whole envelope, or an MCP answer's structuredContent.
    let bases: Vec<Value> = corpus
        .fixtures
        .iter()
        .filter(|_| !built)
        .filter_map(|f| serde_json::from_slice::<Value>(&f.bytes).ok())
        .filter_map(|v| {
            if mcp {
                v.pointer(airlock_guard::STRUCTURED_CONTENT).cloned()
            } else {
                Some(v)
            }
        })
        .collect();
    let view = View {
        agent: new
            .agent_fields()
            .iter()
            .map(|f| f.as_str().to_owned())
            .collect(),
        envelope: !mcp,
        direction: Direction::Response,
    };
    let fixtures = replay(&old, &new, &corpus);
    let mut certificate = compare(new.tool(), old.schema(), new.schema(), &view, bases);
    raw::rewrite(&mut certificate, &old, &new, &corpus);
    certificate.from = json!({"version": from, "sha256": old.schema().sha256()});
    certificate.to = json!({"version": to, "sha256": new.schema().sha256()});
    certificate.add_replay(fixtures);
    Ok(certificate)
}

/// Instances built from a schema document's keywords (its examples and defaults first,
/// every `anyOf`/`oneOf` branch, limits at their edges, strings from each `pattern`):
/// candidates, not guaranteed valid. The same seed gives the same instances.
pub fn instances(document: &Value, seed: u64) -> Vec<Value> {
    generate::candidates(document, document, seed)
}

/// Every fixture under both versions.
fn replay(old: &Contract, new: &Contract, corpus: &Corpus) -> Vec<Replay> {
    let (old_guard, new_guard) = (Guard::new(old.clone()), Guard::new(new.clone()));
    corpus
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
        .collect()
}

/// Two schema files, no contract: the whole instance is the agent's view unless `agent`
/// names fields. Witnesses come from the algebra and from the schemas' own
/// `examples`/`default`/`const` values.
///
/// # Errors
///
/// When either file does not load as a schema (the error names the file), or an agent
/// field is no JSON pointer or one neither schema describes (the error names it).
pub fn certify_files(old: &Path, new: &Path, agent: &[String]) -> Result<Certificate, FilesError> {
    let (o, n) = (
        airlock_guard::load_schema_file(old).map_err(FilesError::Schema)?,
        airlock_guard::load_schema_file(new).map_err(FilesError::Schema)?,
    );
    for pointer in agent {
        if let Err(reason) = agent_field(pointer, o.document(), n.document()) {
            return Err(FilesError::AgentField {
                pointer: pointer.clone(),
                reason,
            });
        }
    }
    let agent = if agent.is_empty() {
        vec![String::new()]
    } else {
        agent.to_vec()
    };
    let tool = new
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut certificate = compare(&tool, &o, &n, &View::fields(agent), Vec::new());
    certificate.from = json!({"path": old.display().to_string(), "sha256": o.sha256()});
    certificate.to = json!({"path": new.display().to_string(), "sha256": n.sha256()});
    Ok(certificate)
}

/// Why two schema files could not be certified.
#[derive(Debug)]
#[non_exhaustive]
pub enum FilesError {
    /// A file does not load as a schema.
    Schema(airlock_guard::ContractError),
    /// An agent field (`--agent-field`) is no JSON pointer, or neither schema describes it.
    AgentField {
        /// The pointer as given.
        pointer: String,
        /// What is wrong with it.
        reason: AgentFieldError,
    },
}

/// What is wrong with an agent field (`--agent-field`) of two-file certification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentFieldError {
    /// Not empty and not starting with `/`.
    #[error("not a JSON pointer: it is empty (the whole instance) or starts with '/'")]
    NoLeadingSlash,
    /// A `~` not followed by `0` or `1`.
    #[error("not a JSON pointer: '~' is written '~0' and '/' is written '~1'")]
    BadEscape,
    /// Neither schema describes the location.
    #[error("neither schema describes this location (check its spelling and case)")]
    NotDescribed,
}

impl std::fmt::Display for FilesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FilesError::Schema(e) => e.fmt(f),
            FilesError::AgentField { pointer, reason } => {
                write!(f, "--agent-field {pointer:?}: {reason}")
            }
        }
    }
}

impl std::error::Error for FilesError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Transparent: the file's error is this error's text already.
            FilesError::Schema(e) => e.source(),
            FilesError::AgentField { .. } => None,
        }
    }
}

/// Whether `pointer` is a JSON pointer (RFC 6901) that the old or the new schema
/// describes: through `properties` and items as far as they go, then (for the rest) a
/// `patternProperties` pattern matching the next member or an `additionalProperties`
/// schema.
fn agent_field(pointer: &str, old: &Value, new: &Value) -> Result<(), AgentFieldError> {
    // The guard's pointer syntax, said in certify's words.
    airlock_guard::Pointer::parse(pointer).map_err(|e| match e {
        airlock_guard::PointerError::NoLeadingSlash { .. } => AgentFieldError::NoLeadingSlash,
        _ => AgentFieldError::BadEscape,
    })?;
    let described = |document: &Value| {
        let tokens: Vec<&str> = pointer.split('/').skip(1).collect();
        let mut at = String::new();
        for token in tokens {
            let next = format!("{at}/{token}");
            if crate::schema::schema_at(document, &next).is_empty() {
                let name = token.replace("~1", "/").replace("~0", "~");
                return crate::schema::schema_at(document, &at).iter().any(|s| {
                    s.get("patternProperties")
                        .and_then(Value::as_object)
                        .is_some_and(|p| {
                            p.keys()
                                .any(|k| regex::Regex::new(k).is_ok_and(|r| r.is_match(&name)))
                        })
                        || s.get("additionalProperties").is_some_and(Value::is_object)
                });
            }
            at = next;
        }
        true
    };
    if described(old) || described(new) {
        Ok(())
    } else {
        Err(AgentFieldError::NotDescribed)
    }
}

/// Bases kept for witness search (fixtures first, then examples and generated ones).
const MAX_BASES: usize = 48;
/// Whole-schema witnesses checked for what reaches the agent.
const MAX_VISIBILITY_WITNESSES: usize = 6;
/// Verdict pairs computed for one structural change's witness search.
const MAX_TRIALS: usize = 2000;
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

impl Certificate {
    /// The verdict and what backs it, from the changes (and the replayed fixtures);
    /// `proved` when the versions were shown to admit the same instances.
    fn settle(&mut self, proved: bool) {
        let replayed = self
            .fixtures
            .iter()
            .filter_map(|f: &Replay| match (f.old, f.new) {
                (true, false) => Some(Class::Breaking),
                (false, true) => Some(Class::AgentVisible),
                _ => None,
            });
        let strongest_change = self
            .changes
            .iter()
            .map(|c| (c.class, c.evidence))
            .min_by_key(|(c, _)| *c);
        let strongest_replay = replayed.min();
        let (verdict, evidence) = match (strongest_change, strongest_replay) {
            (Some((c, e)), Some(r)) if c <= r => (c, e),
            (_, Some(r)) => (r, Evidence::Replay),
            (Some((c, e)), None) => (c, e),
            (None, None) if proved => (Class::Compatible, Evidence::Proof),
            (None, None) => (Class::Compatible, Evidence::Structural),
        };
        self.verdict = verdict;
        // A compatible verdict over changes (all invisible) is backed by the strongest
        // evidence among them; equal schemas or empty differences by the proof.
        self.evidence = if verdict == Class::Compatible && proved {
            Evidence::Proof
        } else {
            evidence
        };
    }

    /// Add the fixtures replayed under both versions and settle the verdict again.
    fn add_replay(&mut self, fixtures: Vec<Replay>) {
        self.fixtures = fixtures;
        let proved = self.semantic.newly_rejected == Existence::No
            && self.semantic.newly_admitted == Existence::No;
        self.settle(proved);
    }
}
