//! A contract: the manifest (`contract.toml`) and the compiled schema of one version,
//! loaded from the contract's folder or built in code. Every problem is a precise
//! [`ContractError`]; nothing here panics on a broken contract.

use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::checks::{parse_duration, CheckSpec};
use crate::input::InputKind;
use crate::limits::{
    read_limited, Limits, ReadError, MAX_BYTES_CEILING, MAX_CONTRACT_FILE_BYTES, MAX_DEPTH_CEILING,
};
use crate::mcp::McpInput;
use crate::names::is_plain_name;
use crate::parse::parse;
use crate::pointer::Pointer;
use crate::projection::ErrorCode;
use crate::resources::{read_regular, ReadRegularError, Resources};
use crate::retry::RetryPolicy;
use crate::schema::{can_contain, CompiledSchema, SchemaError};

mod error;
mod fields;
mod file_names;
mod input_manifest;

use error::invalid;
pub use error::ContractError;
pub use file_names::{schema_version, version_file};
use input_manifest::{input_kind, InputManifest};

/// The manifest's file name inside a contract folder.
pub const MANIFEST: &str = "contract.toml";

/// Schema files are read with this nesting limit (schemas are trusted but still parsed
/// strictly: a duplicate keyword in a schema is an error, not a silent override).
const SCHEMA_MAX_DEPTH: usize = 256;

/// Read a file of a contract folder as the loader does: a regular file of at most
/// [`MAX_CONTRACT_FILE_BYTES`](crate::MAX_CONTRACT_FILE_BYTES), never a link followed out
/// of it, never a FIFO waited on. Tools that read a contract's files beside the loader
/// (a linter, an importer) read them through this, so a file the loader refuses is never
/// read another way.
///
/// # Errors
///
/// [`ContractError::Io`] when the file cannot be read, [`ContractError::Resource`] naming
/// the file and why it is refused (a link, not a regular file, too large).
pub fn read_contract_file(path: &Path) -> Result<Vec<u8>, ContractError> {
    read_regular(path).map_err(|e| match e {
        ReadRegularError::Io(error) => ContractError::Io {
            path: path.to_path_buf(),
            error,
        },
        ReadRegularError::NotRegular(reason) => ContractError::Resource {
            path: path.to_path_buf(),
            reason: reason.to_owned(),
        },
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    tool: String,
    version: u32,
    limits: Limits,
    agent: AgentManifest,
    #[serde(default)]
    checks: Vec<CheckManifest>,
    retry: RetryManifest,
    #[serde(default)]
    lint: LintManifest,
    #[serde(default)]
    input: InputManifest,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct LintManifest {
    #[serde(default)]
    allow: Vec<LintAllowance>,
}

/// A lint finding the contract's authors accept, with their reason (`[lint] allow` in
/// `contract.toml`: `{ rule = "free-text-agent-field", at = "/data/reviewed_by", reason = "…" }`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LintAllowance {
    /// The rule id.
    pub rule: String,
    /// The JSON pointer the finding names.
    pub at: String,
    /// Why it is accepted.
    pub reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentManifest {
    fields: Vec<String>,
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum CheckManifest {
    EqualsParam {
        field: String,
        param: String,
    },
    InParam {
        field: String,
        param: String,
    },
    Fresh {
        field: String,
        max_age: String,
        max_skew: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RetryManifest {
    max_attempts: u32,
    deadline: String,
    retryable: Vec<String>,
}

/// A loaded contract: one tool, one schema version, its limits, agent fields, checks and
/// retry policy. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Contract {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    tool: String,
    version: u32,
    current_version: u32,
    limits: Limits,
    agent_fields: Vec<Pointer>,
    checks: Vec<CheckSpec>,
    retry: RetryPolicy,
    schema: CompiledSchema,
    dir: Option<PathBuf>,
    lint_allowances: Vec<LintAllowance>,
    input: InputKind,
    /// An MCP contract's error schema (`[input] error_schema`).
    error_schema: Option<CompiledSchema>,
}

impl Contract {
    /// Load the contract in `dir` (`schemas/<tool>/`) at its current version.
    ///
    /// # Errors
    ///
    /// A [`ContractError`] naming the file and what is wrong with it.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, ContractError> {
        Self::load_inner(dir.as_ref(), None, None)
    }

    /// Load the contract in `dir` with the schema of another `version` (its manifest's
    /// limits, fields and checks; for replaying historical fixtures and certification).
    ///
    /// # Errors
    ///
    /// As [`Contract::load`], or when `v{version}.schema.json` does not exist.
    pub fn load_version(dir: impl AsRef<Path>, version: u32) -> Result<Self, ContractError> {
        Self::load_inner(dir.as_ref(), Some(version), None)
    }

    /// Load the vendor contract in `dir` at its current version with the vendor schema
    /// `file` (in the contract folder) in place of the one `[input] schema` names: the
    /// guard a vendor schema change would make (`airlock certify --vendor-from`). A
    /// mapping whose `from` the file cannot contain is not a load error here — that guard
    /// fails such responses closed, one by one, which is what certification reports.
    ///
    /// # Errors
    ///
    /// As [`Contract::load`]; also when the contract is not a vendor contract or `file`
    /// is not a `.json` file name in the contract folder.
    pub fn load_with_vendor_schema(
        dir: impl AsRef<Path>,
        file: &str,
    ) -> Result<Self, ContractError> {
        Self::load_inner(dir.as_ref(), None, Some(file))
    }

    /// Start building a contract in code from a schema document.
    pub fn builder(tool: impl Into<String>, schema: Value) -> ContractBuilder {
        ContractBuilder {
            tool: tool.into(),
            schema,
            version: 1,
            limits: Limits::default(),
            agent_fields: Vec::new(),
            checks: Vec::new(),
            retry: RetryPolicy::default(),
            input: InputKind::Envelope,
        }
    }

    fn load_inner(
        dir: &Path,
        version: Option<u32>,
        vendor_file: Option<&str>,
    ) -> Result<Self, ContractError> {
        if dir.is_file() {
            // `schemas/x/contract.toml` for `schemas/x`: say so, not "Not a directory".
            return Err(ContractError::Resource {
                path: dir.to_path_buf(),
                reason: format!(
                    "a file, not a contract folder: give the folder that holds {MANIFEST}"
                ),
            });
        }
        let manifest_path = dir.join(MANIFEST);
        let text = String::from_utf8(read_contract_file(&manifest_path)?).map_err(|_| {
            ContractError::Manifest {
                path: manifest_path.clone(),
                message: "not UTF-8 text".into(),
            }
        })?;
        let manifest: Manifest = toml::from_str(&text).map_err(|e| ContractError::Manifest {
            path: manifest_path.clone(),
            message: e.to_string(),
        })?;
        // The name becomes part of URIs and, in the harness, of paths: check it first.
        check_tool_name(&manifest.tool)?;
        check_limits(manifest.limits)?;
        let version = version.unwrap_or(manifest.version);
        let schema_path = dir.join(version_file(version));
        let source = read_contract_file(&schema_path)?;
        let document =
            parse(&source, SCHEMA_MAX_DEPTH).map_err(|error| ContractError::SchemaJson {
                path: schema_path.clone(),
                error,
            })?;
        let base = format!("{}{}", base_uri(&manifest.tool), file_name(&schema_path));
        // The folder's other files are read only when a `$ref` names them.
        let resources = Resources::folder(dir, &base_uri(&manifest.tool), SCHEMA_MAX_DEPTH);
        let schema = CompiledSchema::compile(document, &source, &base, &resources)
            .map_err(|error| schema_error(&schema_path, error, &resources))?;
        let checks = manifest
            .checks
            .into_iter()
            .enumerate()
            .map(|(i, c)| check_spec(i, c))
            .collect::<Result<Vec<_>, _>>()?;
        let retry = retry_policy(&manifest.retry)?;
        let input = input_kind(manifest.input, vendor_file, |file| {
            compile_contract_file(dir, &manifest.tool, file)
        })?;
        let error_schema = error_schema(dir, &manifest.tool, &input)?;
        if vendor_file.is_none() {
            check_vendor_pointers(&input)?;
        }
        // Fields are checked against the current version's schema; an older version may
        // lack members added since (they are simply absent when replaying it).
        let check_fields = version == manifest.version;
        finish(
            check_fields,
            Inner {
                tool: manifest.tool,
                version,
                current_version: manifest.version,
                limits: manifest.limits,
                agent_fields: pointers("agent.fields", &manifest.agent.fields)?,
                checks,
                retry,
                schema,
                dir: Some(dir.to_path_buf()),
                lint_allowances: manifest.lint.allow,
                input,
                error_schema,
            },
        )
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.inner.tool
    }

    /// The schema version this contract judges by.
    pub fn version(&self) -> u32 {
        self.inner.version
    }

    /// The manifest's current version (equal to [`Contract::version`] unless loaded with
    /// [`Contract::load_version`]).
    pub fn current_version(&self) -> u32 {
        self.inner.current_version
    }

    /// Byte and depth limits.
    pub fn limits(&self) -> Limits {
        self.inner.limits
    }

    /// The agent fields, in manifest order.
    pub fn agent_fields(&self) -> &[Pointer] {
        &self.inner.agent_fields
    }

    /// The declarative checks, in manifest order.
    pub fn checks(&self) -> &[CheckSpec] {
        &self.inner.checks
    }

    /// The retry policy.
    pub fn retry(&self) -> &RetryPolicy {
        &self.inner.retry
    }

    /// The compiled schema.
    pub fn schema(&self) -> &CompiledSchema {
        &self.inner.schema
    }

    /// The lint findings the contract accepts (`[lint] allow`).
    pub fn lint_allowances(&self) -> &[LintAllowance] {
        &self.inner.lint_allowances
    }

    /// The folder the contract was loaded from.
    pub fn dir(&self) -> Option<&Path> {
        self.inner.dir.as_deref()
    }

    /// What the raw response is: an envelope, an MCP `tools/call` response, a vendor
    /// document or a command's output.
    pub fn input(&self) -> &InputKind {
        &self.inner.input
    }

    /// The vendor schema of a vendor contract (`[input] schema`).
    pub fn vendor_schema(&self) -> Option<&CompiledSchema> {
        match &self.inner.input {
            InputKind::Vendor(vendor) => Some(vendor.schema()),
            _ => None,
        }
    }

    /// The error schema of an MCP contract (`[input] error_schema`): it judges the
    /// `structuredContent` of the tool's own errors.
    pub fn error_schema(&self) -> Option<&CompiledSchema> {
        self.inner.error_schema.as_ref()
    }
}

/// Builds a [`Contract`] in code.
///
/// ```
/// use airlock_guard::{CheckSpec, Contract, Pointer};
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {"data": {"type": "object"}}});
/// let contract = Contract::builder("echo", schema)
///     .agent_field("/data/message")
///     .check(CheckSpec::EqualsParam { field: Pointer::parse("/data/id").unwrap(), param: "id".into() })
///     .build()
///     .unwrap();
/// assert_eq!(contract.tool(), "echo");
/// ```
#[derive(Debug)]
pub struct ContractBuilder {
    tool: String,
    schema: Value,
    version: u32,
    limits: Limits,
    agent_fields: Vec<String>,
    checks: Vec<CheckSpec>,
    retry: RetryPolicy,
    input: InputKind,
}

impl ContractBuilder {
    /// What the raw response is (default [`InputKind::Envelope`]). A vendor input comes
    /// from a loaded contract ([`Contract::input`]): it carries its compiled vendor schema.
    #[must_use]
    pub fn input(mut self, input: InputKind) -> Self {
        self.input = input;
        self
    }

    /// The schema version (default 1).
    #[must_use]
    pub fn version(mut self, version: u32) -> Self {
        self.version = version;
        self
    }

    /// Limits (default 4096 bytes, depth 8).
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Add an agent field, a JSON Pointer into the response (default: none).
    #[must_use]
    pub fn agent_field(mut self, pointer: impl Into<String>) -> Self {
        self.agent_fields.push(pointer.into());
        self
    }

    /// Add a declarative check (default: none).
    #[must_use]
    pub fn check(mut self, check: CheckSpec) -> Self {
        self.checks.push(check);
        self
    }

    /// The retry policy (default: 3 attempts, 10 s, `UPSTREAM_UNAVAILABLE`).
    #[must_use]
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Compile the schema and check every field against it.
    ///
    /// # Errors
    ///
    /// As for a contract loaded from disk.
    pub fn build(self) -> Result<Contract, ContractError> {
        check_tool_name(&self.tool)?;
        check_limits(self.limits)?;
        if matches!(&self.input, InputKind::Mcp(mcp) if mcp.error_schema.is_some()) {
            return Err(invalid(
                "input.error_schema",
                "an error schema is a file of a contract folder: load the contract with Contract::load",
            ));
        }
        let source = serde_json::to_vec(&self.schema).unwrap_or_default();
        let base = format!("{}{}", base_uri(&self.tool), version_file(self.version));
        let schema = CompiledSchema::compile(self.schema, &source, &base, &Resources::new())
            .map_err(|error| ContractError::Schema {
                path: PathBuf::from("<in memory>"),
                error,
            })?;
        finish(
            true,
            Inner {
                agent_fields: pointers("agent.fields", &self.agent_fields)?,
                tool: self.tool,
                version: self.version,
                current_version: self.version,
                limits: self.limits,
                checks: self.checks,
                retry: self.retry,
                schema,
                dir: None,
                lint_allowances: Vec::new(),
                input: self.input,
                error_schema: None,
            },
        )
    }
}

/// An MCP contract's error schema (`[input] error_schema`), compiled, with every error
/// field a member it can contain.
fn error_schema(
    dir: &Path,
    tool: &str,
    input: &InputKind,
) -> Result<Option<CompiledSchema>, ContractError> {
    let InputKind::Mcp(McpInput {
        error_schema: Some(file),
        error_fields,
        ..
    }) = input
    else {
        return Ok(None);
    };
    let compiled = compile_contract_file(dir, tool, file)?;
    for (i, field) in error_fields.iter().enumerate() {
        if !can_contain(compiled.document(), field.tokens()) {
            return Err(invalid(
                format!("input.error_fields[{i}]"),
                format!("{field} names a member {file} cannot contain"),
            ));
        }
    }
    Ok(Some(compiled))
}

/// Every pointer of a vendor contract (mapping sources, failure rules) names a member its
/// vendor schema can contain. (Not with another vendor schema in place of the manifest's:
/// that guard fails such responses closed, one by one.)
fn check_vendor_pointers(input: &InputKind) -> Result<(), ContractError> {
    let InputKind::Vendor(vendor) = input else {
        return Ok(());
    };
    let pointers = vendor
        .map
        .iter()
        .enumerate()
        .map(|(i, m)| (format!("input.map[{i}].from"), &m.from))
        .chain(
            vendor
                .failure
                .iter()
                .enumerate()
                .map(|(i, rule)| (format!("input.failure[{i}].at"), &rule.at)),
        );
    for (location, pointer) in pointers {
        if !can_contain(vendor.schema().document(), pointer.tokens()) {
            return Err(invalid(
                location,
                format!(
                    "{pointer} names a member {} cannot contain",
                    vendor.schema_file
                ),
            ));
        }
    }
    Ok(())
}

/// Read, parse and compile `file`, a schema in the contract folder `dir` other than a
/// version (a vendor schema, an error schema).
fn compile_contract_file(
    dir: &Path,
    tool: &str,
    file: &str,
) -> Result<CompiledSchema, ContractError> {
    let path = dir.join(file);
    let source = read_contract_file(&path)?;
    let document = parse(&source, SCHEMA_MAX_DEPTH).map_err(|error| ContractError::SchemaJson {
        path: path.clone(),
        error,
    })?;
    let base = format!("{}{file}", base_uri(tool));
    let resources = Resources::folder(dir, &base_uri(tool), SCHEMA_MAX_DEPTH);
    CompiledSchema::compile(document, &source, &base, &resources)
        .map_err(|error| schema_error(&path, error, &resources))
}

/// A tool name is a name, never a path: 1 to 128 of `A-Z a-z 0-9 _ . -` (the MCP
/// tool-name rule), and not `.` or `..`. The harness makes folders of it.
fn check_tool_name(tool: &str) -> Result<(), ContractError> {
    if is_plain_name(tool) {
        return Ok(());
    }
    let shown = if tool.len() <= 128 {
        format!("{tool:?}")
    } else {
        format!("a name of {} bytes", tool.len())
    };
    Err(invalid(
        "tool",
        format!(
            "{shown} is not a tool name: use 1 to 128 of A-Z a-z 0-9 _ . - \
             (not \".\" or \"..\"; a tool name is never a path)"
        ),
    ))
}

/// Both limits within their ceilings, and at least 1.
fn check_limits(limits: Limits) -> Result<(), ContractError> {
    if !(1..=MAX_BYTES_CEILING).contains(&limits.max_bytes) {
        return Err(invalid(
            "limits.max_bytes",
            format!(
                "{} is out of range: must be 1 to {MAX_BYTES_CEILING} (64 MiB, \
                 MAX_BYTES_CEILING)",
                limits.max_bytes
            ),
        ));
    }
    if !(1..=MAX_DEPTH_CEILING).contains(&limits.max_depth) {
        return Err(invalid(
            "limits.max_depth",
            format!(
                "{} is out of range: must be 1 to {MAX_DEPTH_CEILING} (MAX_DEPTH_CEILING); \
                 depth 1 admits `{{}}` and `[]` with scalar members",
                limits.max_depth
            ),
        ));
    }
    Ok(())
}

/// A compile failure, or the folder file behind it when a `$ref` named one that cannot be
/// a resource.
fn schema_error(path: &Path, error: SchemaError, resources: &Resources) -> ContractError {
    match resources.failure() {
        Some(failure) => ContractError::Resource {
            path: failure.path,
            reason: failure.reason,
        },
        None => ContractError::Schema {
            path: path.to_path_buf(),
            error,
        },
    }
}

/// The last checks shared by both ways of making a contract.
fn finish(check_fields: bool, inner: Inner) -> Result<Contract, ContractError> {
    fields::check(
        check_fields,
        inner.schema.document(),
        &inner.input,
        &inner.agent_fields,
        &inner.checks,
    )?;
    Ok(Contract {
        inner: Arc::new(inner),
    })
}

fn pointers(location: &str, fields: &[String]) -> Result<Vec<Pointer>, ContractError> {
    fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            Pointer::parse(f).map_err(|e| invalid(format!("{location}[{i}]"), e.to_string()))
        })
        .collect()
}

fn check_spec(i: usize, check: CheckManifest) -> Result<CheckSpec, ContractError> {
    let field = |f: &str| {
        Pointer::parse(f).map_err(|e| invalid(format!("checks[{i}].field"), e.to_string()))
    };
    Ok(match check {
        CheckManifest::EqualsParam { field: f, param } => CheckSpec::EqualsParam {
            field: field(&f)?,
            param,
        },
        CheckManifest::InParam { field: f, param } => CheckSpec::InParam {
            field: field(&f)?,
            param,
        },
        CheckManifest::Fresh {
            field: f,
            max_age,
            max_skew,
        } => CheckSpec::Fresh {
            field: field(&f)?,
            max_age: parse_duration(&max_age)
                .map_err(|e| invalid(format!("checks[{i}].max_age"), e.to_string()))?,
            max_skew: parse_duration(&max_skew)
                .map_err(|e| invalid(format!("checks[{i}].max_skew"), e.to_string()))?,
        },
    })
}

fn retry_policy(retry: &RetryManifest) -> Result<RetryPolicy, ContractError> {
    if retry.max_attempts == 0 {
        return Err(invalid("retry.max_attempts", "must be at least 1"));
    }
    let deadline =
        parse_duration(&retry.deadline).map_err(|e| invalid("retry.deadline", e.to_string()))?;
    let deadline = deadline
        .try_into()
        .map_err(|_| invalid("retry.deadline", "out of range"))?;
    let codes = retry
        .retryable
        .iter()
        .enumerate()
        .map(|(i, code)| {
            ErrorCode::from_wire(code).ok_or_else(|| {
                invalid(
                    format!("retry.retryable[{i}]"),
                    format!(
                        "{code:?} is not one of {:?}",
                        ErrorCode::ALL.map(ErrorCode::as_str)
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RetryPolicy::new(retry.max_attempts, deadline, codes))
}

/// Compile a standalone schema file (no manifest), resolving references only to the
/// `*.json` files beside it: a file is read only when a `$ref` names it, and must be a
/// regular file (not a symbolic link). The dialect is checked before any other file is
/// read. A file holding just `true` is the schema that admits every strict JSON document.
///
/// # Errors
///
/// A [`ContractError`] for an unreadable file, a file that is not strict JSON, a schema
/// that does not compile, or a referenced sibling that is a link or not strict JSON.
pub fn load_schema_file(path: &Path) -> Result<CompiledSchema, ContractError> {
    // The file the user named: a link to it is followed, a pipe read to its end; but no
    // more of it than a contract's file may hold (`/dev/zero` is an error, not an endless
    // read).
    let io = |error| ContractError::Io {
        path: path.to_path_buf(),
        error,
    };
    let source = std::fs::File::open(path).map_err(io).and_then(|file| {
        match read_limited(file, MAX_CONTRACT_FILE_BYTES) {
            Ok(bytes) => Ok(bytes),
            Err(ReadError::Io(error)) => Err(io(error)),
            Err(ReadError::TooLarge { .. }) => Err(ContractError::Resource {
                path: path.to_path_buf(),
                reason: format!(
                    "is larger than {MAX_CONTRACT_FILE_BYTES} bytes (MAX_CONTRACT_FILE_BYTES), \
                     the most a schema file may hold"
                ),
            }),
        }
    })?;
    let document = parse(&source, SCHEMA_MAX_DEPTH).map_err(|error| ContractError::SchemaJson {
        path: path.to_path_buf(),
        error,
    })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let base = "airlock://schema/";
    // Siblings are read only when a `$ref` names them, each once.
    let resources = Resources::folder(dir, base, SCHEMA_MAX_DEPTH).scope("the schema files given");
    CompiledSchema::compile(
        document,
        &source,
        &format!("{base}{}", file_name(path)),
        &resources,
    )
    .map_err(|error| schema_error(path, error, &resources))
}

/// The base URI of a contract's files that have no `$id`.
fn base_uri(tool: &str) -> String {
    format!("airlock://contract/{tool}/")
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
