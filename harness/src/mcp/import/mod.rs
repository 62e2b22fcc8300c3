//! `airlock mcp import`: one MCP tool contract per tool with an `outputSchema`, from a
//! saved `tools/list` answer or a live server ([`source`]). A contract is written into a
//! temporary folder beside its place, loaded by the guard, and only then renamed into
//! place; a re-import writes the next schema version when the published schema changed.
//! Nothing is written outside the two folders named, and no corpus file is overwritten.

pub mod source;

use airlock_guard::{ContentKind, Contract, TextRule, MANIFEST};
use serde_json::Value;
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::cases::escape_token;
use crate::certify::{certify, Certificate, Class};
use crate::lint::{lint_contract, LintFinding};
pub use source::{read_files, read_server, ToolsList};

/// `max_bytes` of an imported contract whose outputSchema bounds the size of every
/// string and array it holds (a default to review).
pub const DEFAULT_MAX_BYTES: u64 = 1024 * 1024;

/// `max_bytes` of an imported contract whose outputSchema leaves a string or an array
/// unbounded (a file's text, a listing): MCP servers send such a value twice, in
/// `structuredContent` and in the text block.
pub const UNBOUNDED_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// `[retry] deadline` of an imported contract: the MCP TypeScript SDK's default request
/// timeout, so the proxy never cuts a call the client still waits for.
pub const DEFAULT_DEADLINE: &str = "60s";

/// `max_depth` of an imported contract is the schema's own nesting plus this, at most
/// [`MAX_IMPORTED_DEPTH`]: a `tools/call` response nests `structuredContent` two levels
/// down, and each level of the instance is at least one level of the schema.
pub const DEPTH_HEADROOM: usize = 4;

/// The largest `max_depth` an import writes.
pub const MAX_IMPORTED_DEPTH: usize = 64;

/// Why an import could not run at all (per-tool problems are [`Outcome`]s).
#[derive(Debug)]
#[non_exhaustive]
pub enum ImportError {
    /// The options make no sense (exit 2).
    Usage(String),
    /// A `--tools-list` file is unreadable or not a `tools/list` answer (exit 2).
    Input {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The live server failed: did not start, answered with an error, timed out (exit 2).
    Server(String),
    /// A file or folder could not be written (exit 3).
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The reason.
        source: std::io::Error,
    },
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usage(reason) => f.write_str(reason),
            Self::Input { path, reason } => write!(f, "{}: {reason}", path.display()),
            Self::Server(reason) => write!(f, "the MCP server (--server-cmd): {reason}"),
            Self::Write { path, source } => write!(f, "writing {}: {source}", path.display()),
        }
    }
}

impl std::error::Error for ImportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Where an import writes.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The folder receiving `<tool>/` contract folders (`schemas`).
    pub out: PathBuf,
    /// The folder receiving `<tool>/` corpus folders: default `corpora` beside `out`,
    /// where [`corpus_dir`](crate::corpus::corpus_dir) finds them.
    pub corpora: PathBuf,
}

impl ImportOptions {
    /// Contracts into `out`, corpora into `corpora` beside it.
    pub fn new(out: impl Into<PathBuf>) -> Self {
        let out = out.into();
        let corpora = out
            .parent()
            .map_or_else(|| PathBuf::from("corpora"), |p| p.join("corpora"));
        Self { out, corpora }
    }

    /// Corpora into `corpora` instead.
    #[must_use]
    pub fn corpora(mut self, corpora: impl Into<PathBuf>) -> Self {
        self.corpora = corpora.into();
        self
    }
}

/// What became of one listed tool.
#[derive(Debug)]
pub struct ToolImport {
    /// The tool's name as listed (may be anything a server sent: print it escaped).
    pub name: String,
    /// What happened.
    pub outcome: Outcome,
    /// The settings an import chose for a new contract, each with its reason (`key =
    /// value: why`), one line each.
    pub choices: Vec<String>,
    /// `airlock lint`'s findings on the written contract (imported or updated).
    pub lint: Vec<LintFinding>,
    /// What to review, one line each.
    pub notes: Vec<String>,
}

impl ToolImport {
    /// Whether the operator must act: the tool has an `outputSchema` but no loadable
    /// contract, or its update is breaking (or could not be certified).
    pub fn needs_attention(&self) -> bool {
        match &self.outcome {
            Outcome::Imported { .. } | Outcome::Unchanged { .. } | Outcome::NoOutputSchema => false,
            Outcome::Skipped { .. } | Outcome::Refused { .. } => true,
            Outcome::Updated {
                load_error,
                certificate,
                ..
            } => {
                load_error.is_some()
                    || certificate
                        .as_ref()
                        .map_or(true, |c| c.verdict == Class::Breaking)
            }
        }
    }
}

/// Why an update's `certify` did not run, or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpdateCertifyError {
    /// The updated contract does not load (see [`Outcome::Updated`]'s `load_error`).
    #[error("not run: v{to} does not load")]
    NotLoaded {
        /// The version written.
        to: u32,
    },
    /// `certify` failed (its error names the file).
    #[error("{0}")]
    Certify(crate::check::CheckError),
}

/// The outcome for one tool.
#[derive(Debug)]
pub enum Outcome {
    /// A new contract (version 1) and its corpus skeleton.
    Imported {
        /// The contract folder.
        contract: PathBuf,
        /// The corpus folder.
        corpus: PathBuf,
    },
    /// The published schema changed: `v{to}.schema.json` written, `version` bumped.
    Updated {
        /// The contract folder.
        contract: PathBuf,
        /// The version before.
        from: u32,
        /// The version written.
        to: u32,
        /// Why the updated contract does not load (the files stay written: see
        /// docs/mcp.md), if it does not.
        load_error: Option<airlock_guard::ContractError>,
        /// `certify` of `from` → `to`, or why it could not run.
        certificate: Result<Box<Certificate>, UpdateCertifyError>,
    },
    /// The published schema equals the contract's current version: nothing written.
    Unchanged {
        /// The contract folder.
        contract: PathBuf,
        /// Its current version.
        version: u32,
    },
    /// Not imported: its name cannot be a contract's, or it was listed twice.
    Skipped {
        /// Why.
        reason: String,
    },
    /// No `outputSchema`: its results cannot be judged.
    NoOutputSchema,
    /// Not written: the guard refuses the contract (nothing left behind), or the folder
    /// in the way is not this tool's MCP contract.
    Refused {
        /// Why, and what to do.
        reason: String,
    },
}

impl Outcome {
    /// One word: `imported`, `updated`, `unchanged`, `skipped`, `no-output-schema`,
    /// `refused`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Imported { .. } => "imported",
            Self::Updated { .. } => "updated",
            Self::Unchanged { .. } => "unchanged",
            Self::Skipped { .. } => "skipped",
            Self::NoOutputSchema => "no-output-schema",
            Self::Refused { .. } => "refused",
        }
    }
}

pub use airlock_guard::is_tool_name;

/// Import every listed tool into `options.out` (and corpora into `options.corpora`).
///
/// # Errors
///
/// [`ImportError::Write`] when a folder or file cannot be written; every other problem
/// is one tool's [`Outcome`].
pub fn import(list: &ToolsList, options: &ImportOptions) -> Result<Vec<ToolImport>, ImportError> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for tool in &list.tools {
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let mut entry = ToolImport {
            name: name.clone(),
            outcome: Outcome::NoOutputSchema,
            choices: Vec::new(),
            lint: Vec::new(),
            notes: Vec::new(),
        };
        let schema = tool.get("outputSchema").filter(|s| !s.is_null());
        entry.outcome = if !tool.is_object() || name.is_empty() {
            Outcome::Skipped {
                reason: "a listed tool without a string \"name\"".into(),
            }
        } else if !seen.insert(name.clone()) {
            Outcome::Skipped {
                reason: "listed twice: the first listing was imported".into(),
            }
        } else if let Some(schema) = schema {
            if schema.get("type").and_then(Value::as_str) != Some("object") {
                // MCP: an output schema describes an object (structured content is one);
                // `true` or an array schema would make a contract that judges nothing.
                Outcome::Refused {
                    reason: "its outputSchema is not an object schema (MCP requires \
                             \"type\": \"object\" at its root): not imported; ask the \
                             server's authors to publish one"
                        .into(),
                }
            } else if is_tool_name(&name) {
                import_tool(&name, tool, schema, list, options, &mut entry)?
            } else {
                Outcome::Skipped {
                    reason: format!(
                        "{} is not a contract tool name: 1 to 128 of A-Z a-z 0-9 _ . - (not \
                         \".\" or \"..\"); a tool name is never a path",
                        source::shown(&name)
                    ),
                }
            }
        } else {
            Outcome::NoOutputSchema
        };
        out.push(entry);
    }
    Ok(out)
}

fn import_tool(
    name: &str,
    tool: &Value,
    schema: &Value,
    list: &ToolsList,
    options: &ImportOptions,
    entry: &mut ToolImport,
) -> Result<Outcome, ImportError> {
    let dir = options.out.join(name);
    let corpus = options.corpora.join(name);
    if dir.join(MANIFEST).exists() {
        return update(name, tool, schema, &dir, &corpus, entry);
    }
    if std::fs::symlink_metadata(&dir).is_ok() {
        return Ok(Outcome::Refused {
            reason: format!(
                "{} exists without a {MANIFEST}: remove it, or import into another --out",
                dir.display()
            ),
        });
    }
    create_dir_all(&options.out)?;
    let staging = staging_dir(&options.out, name)?;
    let settings = Settings::choose(tool, schema);
    entry.choices = settings.reasons.clone();
    let written = write_file(&staging.join("v1.schema.json"), &pretty(schema)).and_then(|()| {
        write_file(
            &staging.join(MANIFEST),
            &manifest(name, schema, list, &settings),
        )
    });
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    if let Err(e) = Contract::load(&staging) {
        let _ = std::fs::remove_dir_all(&staging);
        let reason = e
            .to_string()
            .replace(&staging.display().to_string(), &dir.display().to_string());
        return Ok(Outcome::Refused {
            reason: format!("the guard refuses this contract (nothing written): {reason}"),
        });
    }
    if let Err(source) = std::fs::rename(&staging, &dir) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(ImportError::Write { path: dir, source });
    }
    corpus_skeleton(name, tool, &corpus, entry)?;
    entry.lint = lint_contract(&dir);
    Ok(Outcome::Imported {
        contract: dir,
        corpus,
    })
}

/// Re-import into an existing contract folder.
fn update(
    name: &str,
    tool: &Value,
    schema: &Value,
    dir: &Path,
    corpus: &Path,
    entry: &mut ToolImport,
) -> Result<Outcome, ImportError> {
    let refused = |reason: String| Ok(Outcome::Refused { reason });
    let current = match Contract::load(dir) {
        Ok(contract) => contract,
        Err(e) => {
            return refused(format!(
                "the existing contract does not load: {e} (fix it, or remove {}, and import \
                 again)",
                dir.display()
            ))
        }
    };
    if current.tool() != name {
        return refused(format!(
            "{} is the contract of tool {:?}: remove it, or import into another --out",
            dir.display(),
            current.tool()
        ));
    }
    if current.input().mcp().is_none() {
        return refused(format!(
            "{} is an envelope contract, not an MCP one: the MCP tool's name clashes with \
             it; import into another --out",
            dir.display()
        ));
    }
    let from = current.current_version();
    if current.schema().document() == schema {
        // The corpus may be missing (an earlier import could not write it): its missing
        // pieces are added, nothing is overwritten.
        corpus_skeleton(name, tool, corpus, entry)?;
        return Ok(Outcome::Unchanged {
            contract: dir.to_path_buf(),
            version: from,
        });
    }
    let to = from + 1;
    let next = dir.join(airlock_guard::version_file(to));
    if std::fs::symlink_metadata(&next).is_ok() {
        return refused(format!(
            "{} exists while {MANIFEST} says version = {from}: remove it, or set the version \
             by hand, and import again",
            next.display()
        ));
    }
    let manifest_path = dir.join(MANIFEST);
    let text = match airlock_guard::read_contract_file(&manifest_path)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    {
        Ok(text) => text,
        Err(e) => return refused(e.to_string()),
    };
    let Some(bumped) = bump_version(&text, from) else {
        return refused(format!(
            "{} has no single top-level `version = {from}` line to edit: set version = {to} \
             by hand after saving the schema",
            manifest_path.display()
        ));
    };
    write_file(&next, &pretty(schema))?;
    write_file(&manifest_path, &bumped)?;
    corpus_skeleton(name, tool, corpus, entry)?;
    let load_error = Contract::load(dir).err();
    let certificate = match &load_error {
        Some(_) => Err(UpdateCertifyError::NotLoaded { to }),
        None => certify(dir, from, to)
            .map(Box::new)
            .map_err(UpdateCertifyError::Certify),
    };
    if load_error.is_some() {
        entry.notes.push(format!(
            "v{to}.schema.json and version = {to} are written but the contract does not load: \
             edit [agent] fields (they are yours; a re-import never changes them) until \
             `airlock lint --contract {}` is clean",
            dir.display()
        ));
    }
    entry.lint = lint_contract(dir);
    Ok(Outcome::Updated {
        contract: dir.to_path_buf(),
        from,
        to,
        load_error,
        certificate,
    })
}

/// `text` with its one top-level `version = from` line (before any table) set to
/// `from + 1`, anything after the number kept; `None` unless exactly one such line.
fn bump_version(text: &str, from: u32) -> Option<String> {
    let mut found = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            break;
        }
        let Some(rest) = trimmed.strip_prefix("version") else {
            continue;
        };
        let Some(value) = rest.trim_start().strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start();
        let digits = value.len() - value.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let after = &value[digits..];
        if value[..digits] != from.to_string()
            || !(after.trim().is_empty() || after.trim_start().starts_with('#'))
        {
            return None;
        }
        if found.is_some() {
            return None;
        }
        let indent = &line[..line.len() - trimmed.len()];
        found = Some((i, format!("{indent}version = {}{after}", from + 1)));
    }
    let (at, replacement) = found?;
    let mut out = String::with_capacity(text.len() + 1);
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i == at {
            out.push_str(&replacement);
            out.push_str(&line[line.trim_end_matches(['\n', '\r']).len()..]);
        } else {
            out.push_str(line);
        }
    }
    Some(out)
}

/// The schema as written: pretty-printed, members in published order, a final newline.
fn pretty(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

/// How deep the schema document nests (`{}` is 1), counted without recursion.
fn nesting(value: &Value) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(value, 0usize)];
    while let Some((value, depth)) = todo.pop() {
        let children: Vec<&Value> = match value {
            Value::Object(map) => map.values().collect(),
            Value::Array(items) => items.iter().collect(),
            _ => continue,
        };
        deepest = deepest.max(depth + 1);
        todo.extend(children.into_iter().map(|c| (c, depth + 1)));
    }
    deepest
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// The settings an import chooses for a new contract from what the server published
/// (the outputSchema and the tool's annotations), each with the reason it prints.
#[derive(Debug, Clone)]
struct Settings {
    text: TextRule,
    allow_content: Vec<ContentKind>,
    max_bytes: u64,
    read_only: bool,
    idempotent: bool,
    reasons: Vec<String>,
}

impl Settings {
    fn choose(tool: &Value, schema: &Value) -> Self {
        let mut reasons = vec![format!(
            "text = \"consistent\": the agent gets a fresh result built from structuredContent \
             and never this server's text, so prose or a file's text there is not read; text \
             that is JSON must still agree with structuredContent (docs/mcp.md#text)"
        )];
        let allow_content = content_kinds_described(schema);
        if !allow_content.is_empty() {
            let kinds: Vec<&str> = allow_content.iter().map(|k| k.as_str()).collect();
            reasons.push(format!(
                "allow_content = {kinds:?}: the outputSchema describes {} items, which the \
                 server also sends as content blocks (tolerated, never forwarded)",
                kinds.join(" and ")
            ));
        }
        let max_bytes = if let Some(at) = unbounded(schema) {
            reasons.push(format!(
                "max_bytes = {UNBOUNDED_MAX_BYTES}: the outputSchema bounds no size at {at} \
                 (a file, a listing), and a server sends it twice (structuredContent and the \
                 text block); lower it where the tool's answers are small"
            ));
            UNBOUNDED_MAX_BYTES
        } else {
            reasons.push(format!(
                "max_bytes = {DEFAULT_MAX_BYTES}: every string and array in the outputSchema \
                 is bounded"
            ));
            DEFAULT_MAX_BYTES
        };
        let hint = |name: &str| {
            tool.pointer(&format!("/annotations/{name}"))
                .and_then(Value::as_bool)
        };
        let read_only = hint("readOnlyHint").unwrap_or(false);
        let idempotent = read_only || hint("idempotentHint").unwrap_or(false);
        reasons.push(match (hint("readOnlyHint"), read_only) {
            (None, _) => "read_only = false: the tool publishes no readOnlyHint (MCP's default: \
                 it may have side effects), so a refused or unanswered call is \
                 OUTCOME_UNVERIFIED, not INVALID_RESPONSE"
                .to_owned(),
            (Some(_), true) => {
                "read_only = true: the tool's readOnlyHint (a refused result is INVALID_RESPONSE)"
                    .to_owned()
            }
            (Some(_), false) => format!(
                "read_only = false, idempotent = {idempotent}: the tool's annotations (it has side \
                 effects: a refused or unanswered call is OUTCOME_UNVERIFIED, retryable {})",
                if idempotent { "since it is idempotent" } else { "never" }
            ),
        });
        reasons.push(format!(
            "deadline = \"{DEFAULT_DEADLINE}\": the MCP TypeScript SDK's default request \
             timeout (slow tools such as searches take tens of seconds)"
        ));
        Self {
            text: TextRule::Consistent,
            allow_content,
            max_bytes,
            read_only,
            idempotent,
            reasons,
        }
    }
}

/// The content kinds the schema names as the `type` of items it describes (`"enum":
/// ["image", "audio"]` under a `type` property): the server sends those as content blocks.
fn content_kinds_described(schema: &Value) -> Vec<ContentKind> {
    let mut kinds = Vec::new();
    let mut todo = vec![schema];
    while let Some(value) = todo.pop() {
        match value {
            Value::Object(map) => {
                if let Some(Value::Object(properties)) = map.get("properties") {
                    if let Some(kind) = properties.get("type") {
                        let named = kind
                            .get("enum")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .chain(kind.get("const"));
                        for name in named.filter_map(Value::as_str) {
                            let found = [
                                ContentKind::Image,
                                ContentKind::Audio,
                                ContentKind::ResourceLink,
                                ContentKind::Resource,
                            ]
                            .into_iter()
                            .find(|k| k.as_str() == name);
                            if let Some(found) = found.filter(|f| !kinds.contains(f)) {
                                kinds.push(found);
                            }
                        }
                    }
                }
                todo.extend(map.values());
            }
            Value::Array(items) => todo.extend(items),
            _ => {}
        }
    }
    kinds
}

/// The first place (a JSON pointer into the schema) where a string has no `maxLength`, an
/// array no `maxItems`, or an object admits any further members, if any.
fn unbounded(schema: &Value) -> Option<String> {
    let mut todo = vec![(schema, String::new())];
    while let Some((value, at)) = todo.pop() {
        let Value::Object(map) = value else {
            if let Value::Array(items) = value {
                for (i, item) in items.iter().enumerate() {
                    todo.push((item, format!("{at}/{i}")));
                }
            }
            continue;
        };
        let types: Vec<&str> = match map.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let bounded_string = map.contains_key("maxLength")
            || map.contains_key("enum")
            || map.contains_key("const")
            || map.contains_key("format");
        if (types.contains(&"string") && !bounded_string)
            || (types.contains(&"array") && !map.contains_key("maxItems"))
        {
            return Some(if at.is_empty() { "/".into() } else { at });
        }
        for (key, child) in map {
            todo.push((child, format!("{at}/{}", escape_token(key))));
        }
    }
    None
}

/// The imported `contract.toml`.
fn manifest(name: &str, schema: &Value, list: &ToolsList, settings: &Settings) -> String {
    let fields: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.keys())
        .map(|k| toml_string(&format!("/{}", escape_token(k))))
        .collect();
    let depth = (nesting(schema) + DEPTH_HEADROOM).min(MAX_IMPORTED_DEPTH);
    let origin: String = list
        .origin
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    format!(
        "\
# Imported by `airlock mcp import` from {origin}.
# An MCP tool contract: the raw response is the JSON-RPC message answering a tools/call of
# `{name}`; v1.schema.json is the tool's outputSchema exactly as the server published it
# (it judges structuredContent). A re-import writes the next version when the published
# schema changes, and edits only the `version` line below.
# Review before use:
#   * [[checks]]: none were made. Bind the result to the call's arguments (equals_param,
#     in_param) and bound its age (fresh): see docs/contract.md.
#   * [agent] fields: every top-level member of the schema. Drop what the agent need not
#     see; every member the schema requires must stay.
#   * [input] and [limits] were chosen from the outputSchema and the tool's annotations
#     (the import printed why); max_depth is the schema's nesting + {DEPTH_HEADROOM}.
#   * `airlock lint --contract` findings (the import printed them).
#   * the corpus: request.json's params, then accepted/ and near_miss/ fixtures.
tool = {tool}
version = 1

[input]
kind = \"mcp\"
text = \"{text}\"
allow_content = [{allow}]
read_only = {read_only}
idempotent = {idempotent}

[limits]
max_bytes = {max_bytes}
max_depth = {depth}

[agent]
fields = [{fields}]

[retry]
max_attempts = 3
deadline = \"{DEFAULT_DEADLINE}\"
retryable = [\"UPSTREAM_UNAVAILABLE\"]
",
        tool = toml_string(name),
        fields = fields.join(", "),
        text = settings.text.as_str(),
        allow = settings
            .allow_content
            .iter()
            .map(|k| format!("\"{}\"", k.as_str()))
            .collect::<Vec<_>>()
            .join(", "),
        read_only = settings.read_only,
        idempotent = settings.idempotent,
        max_bytes = settings.max_bytes,
    )
}

/// The corpus folder's missing pieces: `request.json` (the call's `jsonrpc_id` 1, params
/// `{}`, now), `accepted/` and `near_miss/` with a `.gitkeep`. Existing files are kept.
fn corpus_skeleton(
    name: &str,
    tool: &Value,
    dir: &Path,
    entry: &mut ToolImport,
) -> Result<(), ImportError> {
    create_dir_all(dir)?;
    let now = airlock_guard::jiff::Timestamp::now()
        .round(airlock_guard::jiff::Unit::Second)
        .unwrap_or_else(|_| airlock_guard::jiff::Timestamp::now());
    let request = serde_json::json!({
        "tool": name,
        "jsonrpc_id": 1,
        "params": {},
        "now": now.to_string(),
    });
    let path = dir.join("request.json");
    if write_new(&path, &pretty(&request))? {
        let required: Vec<&str> = tool
            .pointer("/inputSchema/required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let needs = if required.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = required.iter().map(|r| source::shown(r)).collect();
            format!(" (its inputSchema requires {})", names.join(", "))
        };
        entry.notes.push(format!(
            "{}: params are {{}}: write the arguments of the call your fixtures answer{needs}",
            path.display()
        ));
    }
    for sub in ["accepted", "near_miss"] {
        let folder = dir.join(sub);
        if std::fs::symlink_metadata(&folder).is_err() {
            create_dir_all(&folder)?;
            write_new(&folder.join(".gitkeep"), "")?;
        }
    }
    Ok(())
}

fn create_dir_all(dir: &Path) -> Result<(), ImportError> {
    std::fs::create_dir_all(dir).map_err(|source| ImportError::Write {
        path: dir.to_path_buf(),
        source,
    })
}

/// A fresh folder in `out` to build a contract in (`.<tool>.import-<random>`), created
/// exclusively.
fn staging_dir(out: &Path, name: &str) -> Result<PathBuf, ImportError> {
    tempfile::Builder::new()
        .prefix(&format!(".{name}.import-"))
        .tempdir_in(out)
        .map(tempfile::TempDir::keep)
        .map_err(|source| ImportError::Write {
            path: out.to_path_buf(),
            source,
        })
}

/// A temporary file beside `path` with `text` in it, created exclusively under a random
/// name (never through a file or link already there).
fn temp_beside(path: &Path, text: &str) -> Result<PathBuf, ImportError> {
    let file_name = path.file_name().unwrap_or_default().to_string_lossy();
    let folder = path.parent().unwrap_or(Path::new("."));
    let error = |source| ImportError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{file_name}.tmp-"))
        .tempfile_in(folder)
        .map_err(error)?;
    temp.write_all(text.as_bytes())
        .and_then(|()| temp.as_file().sync_all())
        .map_err(error)?;
    // Kept: the caller renames or links it, then removes what is left.
    let (_, kept) = temp.keep().map_err(|e| error(e.error))?;
    Ok(kept)
}

/// Write `path` whole: a temporary file in its folder, renamed over it.
fn write_file(path: &Path, text: &str) -> Result<(), ImportError> {
    let temp = temp_beside(path, text)?;
    std::fs::rename(&temp, path).map_err(|source| {
        let _ = std::fs::remove_file(&temp);
        ImportError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Write `path` only if nothing is there (a hard link of a temporary file, which never
/// replaces an existing file); whether it was written.
fn write_new(path: &Path, text: &str) -> Result<bool, ImportError> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Ok(false);
    }
    let temp = temp_beside(path, text)?;
    let linked = std::fs::hard_link(&temp, path);
    let _ = std::fs::remove_file(&temp);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(source) => Err(ImportError::Write {
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bump_version_edits_only_the_top_level_version_line() {
        let text = "# v\ntool = \"t\"\nversion = 3 # pinned\n\n[limits]\nversion = 3\n";
        assert_eq!(
            bump_version(text, 3).unwrap(),
            "# v\ntool = \"t\"\nversion = 4 # pinned\n\n[limits]\nversion = 3\n"
        );
        assert!(bump_version(text, 2).is_none());
        assert!(bump_version("version = 1\nversion = 1\n", 1).is_none());
        assert!(bump_version("[a]\nversion = 1\n", 1).is_none());
        assert_eq!(bump_version("version=1", 1).unwrap(), "version = 2");
    }

    #[test]
    fn nesting_counts_containers() {
        assert_eq!(nesting(&json!(1)), 0);
        assert_eq!(nesting(&json!({})), 1);
        assert_eq!(nesting(&json!({"properties": {"a": {"enum": ["x"]}}})), 4);
    }

    #[test]
    fn tool_names_are_the_guards() {
        assert!(is_tool_name("change_review"));
        assert!(is_tool_name("a.b-c_9"));
        for bad in ["", ".", "..", "a/b", "a b", "é", &"x".repeat(129)] {
            assert!(!is_tool_name(bad), "{bad:?}");
        }
    }
}
