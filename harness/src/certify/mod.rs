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

mod comparison;
mod generate;
mod keywords;
mod pattern;
mod raw;
pub mod reports;
mod semantic;
mod structural;
mod subschemas;
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
pub use comparison::compare;
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
