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
mod vendor;

use airlock_guard::{CompiledSchema, Contract, ErrorCode, Guard, InputKind};
use serde::Serialize;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;

use crate::check::CheckError;
use crate::corpus::{find_corpus, Corpus};
pub use semantic::Answer;
pub use structural::diff;
pub use tools::{certify_tools_lists, ToolChange, ToolsCertificate};
pub use vendor::certify_vendor;

/// How a change affects those who depend on the contract, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
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
    pub newly_rejected: Answer,
    /// Is anything admitted now that the old version rejected (`new \ old`)?
    pub newly_admitted: Answer,
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

/// Which way values flow through the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// A response: narrowing breaks, widening may reach the agent.
    Response,
    /// A request (a tool's `inputSchema`): narrowing breaks callers, widening is harmless.
    Request,
}

/// What the agent sees of an admitted instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// The agent fields (JSON pointers; `""` is the whole instance).
    pub agent: Vec<String>,
    /// An envelope contract: agent fields come from successes, and `/error/code` of a
    /// failure reaches the agent when it is one of [`ErrorCode::ALL`].
    pub envelope: bool,
    /// Response or request.
    pub direction: Direction,
}

/// The pointer of an envelope's failure code.
const FAILURE_CODE: &str = "/error/code";

impl View {
    /// A response whose agent sees `agent` (no envelope).
    pub fn fields(agent: Vec<String>) -> Self {
        Self {
            agent,
            envelope: false,
            direction: Direction::Response,
        }
    }

    /// Whether a change at a location can reach the agent: the location is, lies inside
    /// or holds one of the agent fields, or is the forwarded failure code.
    pub fn visible(&self, pointer: &str) -> bool {
        self.direction == Direction::Response
            && (self.agent.iter().any(|f| {
                f.is_empty()
                    || pointer == f
                    || pointer.starts_with(&format!("{f}/"))
                    || f.starts_with(&format!("{pointer}/"))
            }) || (self.envelope && pointer == FAILURE_CODE))
    }

    /// Whether a location is, or lies inside, an agent field (what the agent receives
    /// whole): members appearing there reach the agent; at an ancestor they do not.
    pub fn reaches(&self, pointer: &str) -> bool {
        self.direction == Direction::Response
            && self
                .agent
                .iter()
                .any(|f| f.is_empty() || pointer == f || pointer.starts_with(&format!("{f}/")))
    }

    /// The class of a change that only admits more at `pointer`.
    fn loosened(&self, pointer: &str) -> Class {
        if self.visible(pointer) {
            Class::AgentVisible
        } else {
            Class::Compatible
        }
    }

    /// Why a loosening at `pointer` has its class, for the detail.
    fn why(&self, pointer: &str) -> &'static str {
        match self.direction {
            Direction::Request => " (a request: arguments accepted before still are)",
            Direction::Response if self.visible(pointer) => "",
            Direction::Response => " (not an agent field: the guard never hands it to the agent)",
        }
    }

    /// Values newly allowed by an `enum` at `pointer`: the forwarded failure codes among
    /// them are agent-visible, the others are turned away by the guard's projection.
    fn new_values(&self, pointer: &str, added: &[Value]) -> (Class, &'static str, String) {
        if self.envelope && pointer == FAILURE_CODE && self.direction == Direction::Response {
            let forwarded: Vec<&str> = added
                .iter()
                .filter_map(Value::as_str)
                .filter(|c| ErrorCode::from_wire(c).is_some())
                .collect();
            return if forwarded.is_empty() {
                (
                    Class::Compatible,
                    "enum_widened",
                    format!(
                        " (not forwarded: the guard admits only {:?} as failure codes)",
                        ErrorCode::ALL.map(ErrorCode::as_str)
                    ),
                )
            } else {
                (
                    Class::AgentVisible,
                    "failure_code_forwarded",
                    format!(" (the guard forwards {forwarded:?} to the agent)"),
                )
            };
        }
        (
            self.loosened(pointer),
            "enum_widened",
            self.why(pointer).to_owned(),
        )
    }
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
        reason: String,
    },
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
fn agent_field(pointer: &str, old: &Value, new: &Value) -> Result<(), String> {
    if !pointer.is_empty() && !pointer.starts_with('/') {
        return Err(
            "not a JSON pointer: it is empty (the whole instance) or starts with '/'".into(),
        );
    }
    let mut rest = pointer;
    while let Some(i) = rest.find('~') {
        if !matches!(rest.as_bytes().get(i + 1), Some(b'0' | b'1')) {
            return Err("not a JSON pointer: '~' is written '~0' and '/' is written '~1'".into());
        }
        rest = &rest[i + 2..];
    }
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
        Err("neither schema describes this location (check its spelling and case)".into())
    }
}

/// Bases kept for witness search (fixtures first, then examples and generated ones).
const MAX_BASES: usize = 48;
/// Whole-schema witnesses checked for what reaches the agent.
const MAX_VISIBILITY_WITNESSES: usize = 6;
/// Verdict pairs computed for one structural change's witness search.
const MAX_TRIALS: usize = 2000;
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
    let judge = Judge { old, new };
    let bases = judge.bases(bases);
    // The two versions, then the two directions, each pair on two threads.
    let canonical = if od == nd {
        Err("the same document".to_owned())
    } else {
        std::thread::scope(|scope| {
            let old = scope.spawn(|| semantic::canonical(od));
            let new = semantic::canonical(nd);
            let old = old
                .join()
                .unwrap_or_else(|_| Err("the algebra panicked".to_owned()));
            Ok::<_, String>((old?, new?))
        })
    };
    let ((rejected, rejected_schema), (admitted, admitted_schema)) = match &canonical {
        // The same document admits the same instances.
        _ if od == nd => ((Answer::No, None), (Answer::No, None)),
        Ok((o, n)) => std::thread::scope(|scope| {
            let rejected = scope.spawn(|| semantic::difference(o, n, MAX_DIFFERENCE_BYTES));
            let admitted = semantic::difference(n, o, MAX_DIFFERENCE_BYTES);
            let rejected = rejected
                .join()
                .unwrap_or_else(|_| (Answer::Refused("the algebra panicked".to_owned()), None));
            (rejected, admitted)
        }),
        Err(reason) => (
            (Answer::Refused(reason.clone()), None),
            (Answer::Refused(reason.clone()), None),
        ),
    };
    let mut semantic = Semantic {
        newly_rejected: rejected.clone(),
        newly_admitted: admitted.clone(),
        dropped: 0,
    };
    let proved = |answer: &Answer| *answer == Answer::No;
    // Structural changes, each with a witness when one is found; a change the proofs
    // contradict is an artefact of reading the documents and is dropped.
    let mut changes = Vec::new();
    for mut change in merged(structural::diff_view(od, nd, view)) {
        let witness = judge.structural_witness(&change, &bases);
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
                if (narrowing && proved(&rejected))
                    || (widening && proved(&admitted))
                    || (change.class == Class::Unknown && proved(&rejected) && proved(&admitted))
                {
                    semantic.dropped += 1;
                    continue;
                }
                if change.class == Class::Unknown && proved(&rejected) {
                    // Only the widening side is left open.
                    change.class = view.loosened(&change.pointer);
                }
            }
        }
        changes.push(change);
    }
    let witnessed = |class: Class, changes: &[Change]| {
        changes
            .iter()
            .any(|c| c.class == class && c.evidence == Evidence::Witness)
    };
    // The whole schema, newly rejected: a witness from the difference, the fixtures, the
    // schema's own values.
    if !proved(&rejected) {
        let pool = rejected_schema
            .as_ref()
            .map(|d| generate::candidates(d, d, 11))
            .unwrap_or_default();
        let found = judge.separating(pool.into_iter().chain(bases.iter().cloned()), true, 1);
        let class = narrowed(view);
        match found.into_iter().next() {
            Some(instance) if !witnessed(class, &changes) => changes.push(Change {
                class,
                kind: "newly_rejected",
                pointer: String::new(),
                detail: match view.direction {
                    Direction::Response => {
                        "a response the old version admitted is rejected now".into()
                    }
                    Direction::Request => {
                        "arguments the old version accepted are rejected now".into()
                    }
                },
                evidence: Evidence::Witness,
                witness: Some(Witness {
                    accepted_by: "old_only",
                    instance,
                    isolated: true,
                }),
            }),
            Some(_) => {}
            // Undecided, and no witness settled it: never taken for "nothing rejected"
            // (a narrowing the documents show already makes the verdict breaking).
            None if !changes.iter().any(|c| c.class == Class::Breaking) => {
                changes.push(Change {
                    class: Class::Unknown,
                    kind: "newly_rejected",
                    pointer: String::new(),
                    detail: if rejected == Answer::Yes {
                        "the algebra finds instances the new version rejects, but no witness was confirmed by both guards".into()
                    } else {
                        format!(
                            "the algebra could not decide whether anything the old version admitted is rejected now ({}), and no witness was found",
                            rejected.as_str()
                        )
                    },
                    evidence: Evidence::Structural,
                    witness: None,
                });
            }
            None => {}
        }
    }
    // Newly admitted: what of it reaches the agent.
    if !proved(&admitted) {
        let pool = admitted_schema
            .as_ref()
            .map(|d| generate::candidates(d, d, 12))
            .unwrap_or_default();
        let found = judge.separating(
            pool.into_iter().chain(bases.iter().cloned()),
            false,
            MAX_VISIBILITY_WITNESSES,
        );
        let mut chosen: Option<(Class, String, Value)> = None;
        for instance in found {
            let (class, detail) = match view.direction {
                Direction::Request => (
                    Class::Compatible,
                    "arguments the old version rejected are accepted now".to_owned(),
                ),
                Direction::Response => {
                    visibility(view, &instance, canonical.as_ref().ok().map(|c| &c.0), od)
                }
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
                });
            }
            Some(_) => {}
            None if admitted == Answer::Yes && strongest_witnessed.is_none() => changes.push(Change {
                class: if view.direction == Direction::Request { Class::Compatible } else { Class::Unknown },
                kind: "newly_admitted",
                pointer: String::new(),
                detail: "the algebra finds instances only the new version admits, but no witness was confirmed by both guards".into(),
                evidence: Evidence::Structural,
                witness: None,
            }),
            None => {}
        }
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

/// Changes that are one edit seen at many locations (a definition reached along several
/// paths): the same class, kind, detail and member name, kept once at the first
/// location, the others counted in the detail.
fn merged(changes: Vec<Change>) -> Vec<Change> {
    let mut out: Vec<(Change, usize)> = Vec::new();
    for change in changes {
        let last = |p: &str| p.rsplit('/').next().unwrap_or_default().to_owned();
        let same = out.iter_mut().find(|(c, _)| {
            c.class == change.class
                && c.kind == change.kind
                && c.detail == change.detail
                && last(&c.pointer) == last(&change.pointer)
        });
        match same {
            Some((_, more)) => *more += 1,
            None => out.push((change, 0)),
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
    for (pointer, question, detail) in questions {
        match semantic::restricted(old, &question, dialect).0 {
            Answer::No => return (Class::AgentVisible, format!("{pointer}: {detail}")),
            Answer::Yes => {}
            Answer::Unknown | Answer::Refused(_) => undecided.push(pointer),
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
                "newly admitted; undecided whether {} can reach the agent",
                undecided.join(", ")
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

/// The guard's compiled schemas of both versions: the only judges of a witness.
struct Judge<'a> {
    old: &'a CompiledSchema,
    new: &'a CompiledSchema,
}

impl Judge<'_> {
    fn verdicts(&self, v: &Value) -> (bool, bool) {
        (self.old.is_valid(v), self.new.is_valid(v))
    }

    /// The instances to edit: `given` first, then each version's examples and generated
    /// instances that one of the versions admits.
    /// The given ones (fixtures, near misses included: an edit that makes one admitted
    /// is isolated) are all kept, up to the bound; the others only when a version
    /// admits them.
    fn bases(&self, given: Vec<Value>) -> Vec<Value> {
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
    fn separating(
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
    fn structural_witness(&self, change: &Change, bases: &[Value]) -> Option<Witness> {
        let (od, nd) = (self.old.document(), self.new.document());
        let (o, n) = (
            structural::conjunction(od, &change.pointer),
            structural::conjunction(nd, &change.pointer),
        );
        let mut values = Vec::new();
        if let Some(branch) = structural::branch_of(change) {
            let root = if change.kind == "branch_removed" {
                od
            } else {
                nd
            };
            values.extend(generate::candidates(root, &branch, 3));
        }
        for (root, side) in [(od, &o), (nd, &n)] {
            for s in side.iter() {
                values.extend(generate::candidates(root, s, 4));
            }
        }
        values.extend(candidates(&o, &n));
        let mut edits: Vec<Option<Value>> = vec![None];
        for v in values {
            if !edits.contains(&Some(v.clone())) {
                edits.push(Some(v));
            }
        }
        let (os, ns) = (listed(&o), listed(&n));
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
        let (parent, _) = structural::parent_and_name(&change.pointer);
        let side = if change.class == Class::Breaking {
            od
        } else {
            nd
        };
        let built: Vec<Value> = bases
            .iter()
            .filter(|b| b.pointer(parent).is_none())
            .take(MAX_BUILT_BASES)
            .filter_map(|b| {
                let mut b = b.clone();
                materialize(&mut b, parent, side).then_some(b)
            })
            .collect();
        for base in bases
            .iter()
            .filter(|b| b.pointer(parent).is_some())
            .chain(&built)
        {
            let before = self.verdicts(base);
            let own = base
                .pointer(&change.pointer)
                .and_then(Value::as_str)
                .map(|text| resized(text, &o, &n))
                .unwrap_or_default();
            for edit in edits.iter().cloned().chain(own.into_iter().map(Some)) {
                trials += 1;
                if trials > MAX_TRIALS {
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
                let probe = probe.get_or_insert_with(|| self.probes(change));
                let exercised = match probe {
                    Some((old_made_new, new_made_old)) => {
                        old_made_new.is_valid(&instance) == b
                            || new_made_old.is_valid(&instance) == a
                    }
                    // No keyword to isolate: the edit at the location must flip a verdict
                    // (at the whole instance, every edit is at the location).
                    None => isolated || change.pointer.is_empty(),
                };
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
                // An undecided change: a narrowing is what matters most, so an old-only
                // witness is preferred.
                let rank = rank
                    + if isolated { 0 } else { 2 }
                    + if !a && change.class == Class::Unknown {
                        4
                    } else {
                        0
                    };
                if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                    best = Some((rank, found));
                }
            }
        }
        best.map(|(_, w)| w)
    }
}

impl Judge<'_> {
    /// The old version with only `change`'s keyword at its location as the new version has
    /// it, and the new version with it as the old one has it; `None` when the change names
    /// no keyword written at the location itself (a branch's, a member's) or a document
    /// does not compile alone.
    fn probes(&self, change: &Change) -> Option<(CompiledSchema, CompiledSchema)> {
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
fn probe(from: &Value, to: &Value, pointer: &str, word: &str) -> Option<CompiledSchema> {
    let (o, n) = (
        structural::conjunction(from, pointer),
        structural::conjunction(to, pointer),
    );
    let wanted = structural::keyword(&n, word);
    if structural::keyword(&o, word) == wanted {
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
    let source = document.to_string();
    CompiledSchema::compile(
        document,
        source.as_bytes(),
        "airlock://certify/probe.json",
        &airlock_guard::Resources::new(),
    )
    .ok()
}

/// The keyword a structural change is about, when it is one keyword at its location.
fn changed_keyword(change: &Change) -> Option<&str> {
    match change.kind {
        "enum_narrowed" | "enum_widened" | "failure_code_forwarded" => Some("enum"),
        "keyword_changed" | "pattern_changed" | "const_changed" | "format_changed"
        | "constraint_removed" | "limit_tightened" | "limit_loosened" => {
            change.detail.split(' ').next()
        }
        _ => None,
    }
}

/// The JSON pointer of `node` (by identity) inside `document`.
fn path_of(document: &Value, node: &Value) -> Option<String> {
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
fn listed(schemas: &[&Value]) -> Vec<Value> {
    let mut values: Vec<Value> = structural::keyword(schemas, "enum")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    values.extend(structural::keyword(schemas, "const").cloned());
    values
}

/// Candidate values for a location: values one version's `enum`/`const` allow and the
/// other's do not (plus one both allow), edges of the limits, one value of each type.
fn candidates(o: &[&Value], n: &[&Value]) -> Vec<Value> {
    let keyword = structural::keyword;
    let (os, ns) = (listed(o), listed(n));
    let mut out: Vec<Value> = os.iter().filter(|v| !ns.contains(v)).cloned().collect();
    out.extend(ns.iter().filter(|v| !os.contains(v)).cloned());
    out.extend(os.iter().find(|v| ns.contains(v)).cloned());
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
fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation)]
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}

/// Edits of a string a base holds: cut to and just past each length limit (its own
/// characters, so a pattern it matched still has a chance).
fn resized(text: &str, o: &[&Value], n: &[&Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for schemas in [o, n] {
        for word in ["maxLength", "minLength"] {
            let Some(len) = structural::keyword(schemas, word).and_then(Value::as_u64) else {
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

/// Bases lacking a change's location that get it built, per change.
const MAX_BUILT_BASES: usize = 8;

/// Build the members and items along `pointer` that `value` lacks, each generated from
/// what `document` says of its location; false when a step cannot be built.
fn materialize(value: &mut Value, pointer: &str, document: &Value) -> bool {
    let tokens: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    let mut at = String::new();
    let mut current = value;
    for token in tokens {
        at = format!("{at}/{}", crate::cases::escape_token(&token));
        let built = |at: &str| -> Option<Value> {
            let nodes: Vec<Value> = structural::conjunction(document, at)
                .into_iter()
                .cloned()
                .collect();
            generate::candidates(document, &json!({"allOf": nodes}), 5)
                .into_iter()
                .find(|v| v.is_object() || v.is_array())
        };
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

/// Set (or remove, `None`) the member or array item at `pointer`; false when its parent
/// is not there.
fn set_at(value: &mut Value, pointer: &str, new: Option<Value>) -> bool {
    if pointer.is_empty() {
        return match new {
            Some(v) => {
                *value = v;
                true
            }
            None => false,
        };
    }
    let (parent, name) = structural::parent_and_name(pointer);
    match (value.pointer_mut(parent), new) {
        (Some(Value::Object(map)), Some(v)) => {
            map.insert(name, v);
            true
        }
        (Some(Value::Object(map)), None) => map.shift_remove(&name).is_some(),
        (Some(Value::Array(items)), edit) => {
            let Ok(index) = name.parse::<usize>() else {
                return false;
            };
            match edit {
                Some(v) if index < items.len() => items[index] = v,
                Some(v) if index == items.len() => items.push(v),
                None if index < items.len() => {
                    items.remove(index);
                }
                _ => return false,
            }
            true
        }
        _ => false,
    }
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
        let proved = self.semantic.newly_rejected == Answer::No
            && self.semantic.newly_admitted == Answer::No;
        self.settle(proved);
    }
}

impl Certificate {
    /// The certificate as pretty JSON.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The certificate for a pull request or a review record.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let side = |v: &Value| {
            v.get("version")
                .map(|n| format!("v{n}"))
                .or_else(|| {
                    v.get("vendor_schema")
                        .and_then(Value::as_str)
                        .map(|f| format!("vendor schema `{f}`"))
                })
                .or_else(|| {
                    v.get("path")
                        .and_then(Value::as_str)
                        .map(|p| format!("`{p}`"))
                })
                .unwrap_or_default()
        };
        let _ = writeln!(
            out,
            "# Certificate: `{}` {} → {}\n\n**Verdict: {}** (evidence: {})\n\n| | schema | SHA-256 |\n|---|---|---|\n| from | {} | `{}` |\n| to | {} | `{}` |\n",
            self.tool,
            side(&self.from),
            side(&self.to),
            self.verdict.as_str(),
            self.evidence.as_str(),
            side(&self.from),
            self.from["sha256"].as_str().unwrap_or_default(),
            side(&self.to),
            self.to["sha256"].as_str().unwrap_or_default(),
        );
        let _ = writeln!(
            out,
            "Set algebra: newly rejected **{}**, newly admitted **{}** (`no` is a proof).\n",
            self.semantic.newly_rejected.as_str(),
            self.semantic.newly_admitted.as_str()
        );
        let _ = writeln!(
            out,
            "## Changes\n\n| class | change | at | detail | evidence | witness |\n|---|---|---|---|---|---|"
        );
        for c in &self.changes {
            let witness = c.witness.as_ref().map_or_else(
                || "none".to_owned(),
                |w| {
                    let isolated = if w.isolated { "" } else { " (not isolated)" };
                    format!("{}{isolated}: `{}`", w.accepted_by, w.instance)
                },
            );
            let _ = writeln!(
                out,
                "| {} | {} | `{}` | {} | {} | {} |",
                c.class.as_str(),
                c.kind,
                c.pointer,
                c.detail.replace('|', "\\|"),
                c.evidence.as_str(),
                witness.replace('|', "\\|")
            );
        }
        if self.fixtures.is_empty() {
            return out;
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
