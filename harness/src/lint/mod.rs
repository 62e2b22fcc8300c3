//! `airlock lint`: what a contract's schema lets through that a guard should not, found
//! statically and pointed at by line and column of the schema file.
//!
//! ```
//! use airlock_harness::lint::{lint_contract, Level};
//!
//! let findings = lint_contract("../schemas/job_run_status".as_ref());
//! assert!(findings.iter().all(|f| f.severity != Level::Error || f.allowed.is_some()));
//! ```

use airlock_guard::{
    in_place_ref_cycle, parse, schema_version, CheckSpec, Contract, InputKind, Pointer,
};
use serde::Serialize;
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};

mod rules;
mod upstream;

pub use crate::base::pointer::positions;
use rules::Linter;

/// How serious a finding is: errors fail `airlock lint`, warnings only with `--strict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// The schema lets hostile or ambiguous responses through.
    Error,
    /// A weakness worth a look or an explicit allowance.
    Warning,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Error => "error",
            Level::Warning => "warning",
        })
    }
}

/// Every rule: id, severity, what it flags.
pub const RULES: &[(&str, Level, &str)] = &[
    ("schema-dialect", Level::Error, "`$schema` missing, or not one of the dialects the guard accepts (Draft 2020-12, 2019-09, draft-07)"),
    ("older-dialect", Level::Warning, "`$schema` is draft-07 or Draft 2019-09: accepted and linted in its own rules (`definitions`, `items` tuples, `dependencies`, a draft-07 `$ref` ignoring its siblings), but older than Draft 2020-12"),
    ("remote-ref", Level::Error, "a `$ref`/`$dynamicRef`/`$recursiveRef` outside the contract's own files"),
    ("ref-cycle", Level::Error, "a reference cycle that never steps into a member or item (only `$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`, schema-valued `dependencies`): it admits any value, and the guard refuses to load it (recursion through `properties`, `items` and the like is fine)"),
    ("open-object", Level::Error, "an object schema that admits members it does not list (no `additionalProperties: false` or `unevaluatedProperties: false`)"),
    ("composition-needs-unevaluated", Level::Error, "`additionalProperties: false` beside `allOf`/`anyOf`/`oneOf`/`$ref` whose branches declare members: they are rejected, `unevaluatedProperties: false` was meant"),
    ("envelope-overlap", Level::Error, "root `oneOf`/`anyOf` branches without a required `const` member that tells them apart"),
    ("unconstrained", Level::Error, "a member schema of `true` or `{}` (annotations only): any value at all is admitted"),
    ("free-form-map", Level::Warning, "`patternProperties` or a schema-valued `additionalProperties`: members of any name"),
    ("unbounded-string", Level::Warning, "a string without `maxLength`, `enum`, `const` or a bounded anchored pattern"),
    ("unbounded-array", Level::Warning, "an array without `maxItems`"),
    ("unanchored-pattern", Level::Warning, "a pattern without `^` and `$`: it matches anywhere in the string"),
    ("backtracking-pattern", Level::Warning, "a quantified group holding a quantifier (`(a+)+`): catastrophic on backtracking engines"),
    ("free-text-agent-field", Level::Warning, "an agent field that is free text (a string without `enum`, `const`, a bounded anchored `pattern` or `format`): instructions can ride in it"),
    ("all-optional", Level::Warning, "an object that admits `{}`: it lists members, requires none and sets no `minProperties` (outside compositions, conditions and `contains`, where siblings may require them)"),
    ("vendor-pointer-undescribed", Level::Warning, "a vendor mapping's `from` or failure rule's `at` that the vendor schema does not describe (no `properties` entry leads there): an open object admits it, so a misspelt pointer loads, and the vendor schema promises nothing about its value"),
    ("table-value-refused", Level::Error, "a value of a mapping's `table` that the contract schema refuses at that `data` member: every response carrying its key would be rejected at runtime"),
    ("line-bound-default", Level::Warning, "a line grammar (`[input] kind = \"lines\"`) without `max_line_bytes`: the default (4096) bounds its lines, not the command's own longest line"),
    ("line-bound-unreachable", Level::Warning, "a line grammar whose `max_line_bytes` is not below `[limits] max_bytes`: the output's limit is reached first, so lines are never held to the line bound"),
    ("schema-unreadable", Level::Error, "a schema file cannot be read or is not strict JSON"),
    ("stale-allowance", Level::Warning, "a `[lint] allow` entry of contract.toml that matches no finding"),
];

/// The rules a vendor schema is held to: it loads, stays in the contract's files, and its
/// patterns are safe; openness and bounds are the contract schema's business.
const VENDOR_RULES: &[&str] = &[
    "schema-dialect",
    "older-dialect",
    "remote-ref",
    "ref-cycle",
    "unanchored-pattern",
    "backtracking-pattern",
];

fn severity(rule: &str) -> Level {
    RULES
        .iter()
        .find(|(id, _, _)| *id == rule)
        .map_or(Level::Error, |(_, s, _)| *s)
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LintFinding {
    /// The rule id.
    pub rule: &'static str,
    /// Its severity.
    pub severity: Level,
    /// The schema (or contract) file.
    pub file: PathBuf,
    /// JSON pointer into the schema (for `free-text-agent-field`, the agent field's
    /// subschema).
    pub pointer: String,
    /// 1-based line of the flagged value in `file` (0 when unknown).
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong and what to do.
    pub message: String,
    /// The reason given in `contract.toml`'s `[lint] allow`, when allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed: Option<String>,
}

impl fmt::Display for LintFinding {
    /// `file:line:column: severity[rule] pointer: message`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(
            f,
            "{}:{}:{}: {}[{}] {at}: {}",
            self.file.display(),
            self.line,
            self.column,
            self.severity,
            self.rule,
            self.message
        )?;
        if let Some(reason) = &self.allowed {
            write!(f, " (allowed: {reason})")?;
        }
        Ok(())
    }
}

/// Lint the contract in `dir`: every contract schema version (`v<N>.schema.json`, the
/// loader's own rule) with the contract's rules, its agent fields and its `[lint] allow`
/// list; for a vendor contract, the vendor schema `[input] schema` names and any other
/// `*.schema.json` beside it (a vendor schema staged for an upgrade, or the one kept
/// after it) with the vendor rules. A contract that does not load is itself a finding.
pub fn lint_contract(dir: &Path) -> Vec<LintFinding> {
    let manifest = dir.join(airlock_guard::MANIFEST);
    let (contract, mut findings) = match Contract::load(dir) {
        Ok(contract) => (Some(contract), Vec::new()),
        Err(error) => (
            None,
            vec![LintFinding {
                rule: "contract-load",
                severity: Level::Error,
                file: manifest.clone(),
                pointer: String::new(),
                line: 0,
                column: 0,
                message: error.to_string(),
                allowed: None,
            }],
        ),
    };
    // The vendor schema's name, read from the manifest as written when the contract does
    // not load (its files are still linted, each by its own rules).
    let vendor: Option<String> = match &contract {
        Some(c) => match c.input() {
            InputKind::Vendor(v) => Some(v.schema_file.clone()),
            _ => None,
        },
        None => vendor_schema_as_written(&manifest),
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    let name = p.file_name().unwrap_or_default().to_string_lossy();
                    name.ends_with(".schema.json") || vendor.as_deref() == Some(&*name)
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let tool = contract
        .as_ref()
        .map(|c| c.tool().to_owned())
        .unwrap_or_default();
    for file in files {
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        let Some(version) = schema_version(&name) else {
            if vendor.is_some() {
                // A vendor schema describes the upstream's own broad document: it may be
                // open and unbounded (only mapped members reach the envelope, whose closed
                // schema is linted in full), but it must still load safely. The one
                // `[input] schema` names, and any other beside it: staged for an upgrade
                // (`vendor.v2.schema.json`) or kept after one.
                let mut found = lint_schema_file(&file, &[], Some(&tool));
                found.retain(|f| VENDOR_RULES.contains(&f.rule));
                findings.extend(found);
            }
            // Otherwise a file a `$ref` reaches: linted where it is used.
            continue;
        };
        let fields = match &contract {
            Some(c) if c.version() == version => free_text_candidates(c),
            _ => Vec::new(),
        };
        let mut found = lint_schema_file(&file, &fields, Some(&tool));
        let mcp = match &contract {
            Some(c) => c.input().mcp().is_some(),
            // A contract that does not load is still read for its kind, as written.
            None => input_kind_as_written(&manifest).as_deref() == Some("mcp"),
        };
        if mcp {
            // An MCP output schema: no `$schema` is 2020-12 by the MCP specification, and
            // the schema judges `structuredContent`, not an envelope of branches.
            found.retain(|f| {
                !(f.rule == "schema-dialect" && f.pointer.is_empty())
                    && f.rule != "envelope-overlap"
            });
        }
        findings.extend(found);
    }
    if let Some(contract) = &contract {
        findings.extend(upstream::lint_input(contract, &manifest));
        for finding in &mut findings {
            finding.allowed = contract
                .lint_allowances()
                .iter()
                .find(|a| a.rule == finding.rule && a.at == finding.pointer)
                .map(|a| a.reason.clone());
        }
    }
    if let Some(contract) = &contract {
        for allowance in contract.lint_allowances() {
            let used = findings
                .iter()
                .any(|f| f.rule == allowance.rule && f.pointer == allowance.at);
            if !used {
                findings.push(LintFinding {
                    rule: "stale-allowance",
                    severity: Level::Warning,
                    file: manifest.clone(),
                    pointer: allowance.at.clone(),
                    line: 0,
                    column: 0,
                    message: format!(
                        "`[lint] allow` of {} at {} matches no finding: remove it",
                        allowance.rule, allowance.at
                    ),
                    allowed: None,
                });
            }
        }
    }
    findings
}

/// A contract file's text, read as the loader reads it (a regular file, no link followed,
/// bounded), or `None`.
fn contract_text(path: &Path) -> Option<String> {
    String::from_utf8(airlock_guard::read_contract_file(path).ok()?).ok()
}

/// `[input] kind` of a manifest that does not load, read as plain TOML.
fn input_kind_as_written(manifest: &Path) -> Option<String> {
    let text = contract_text(manifest)?;
    let value: toml::Value = toml::from_str(&text).ok()?;
    value.get("input")?.get("kind")?.as_str().map(str::to_owned)
}

/// `[input] schema` of a vendor manifest that does not load, read as plain TOML.
fn vendor_schema_as_written(manifest: &Path) -> Option<String> {
    let text = contract_text(manifest)?;
    let value: toml::Value = toml::from_str(&text).ok()?;
    let input = value.get("input")?;
    if input.get("kind")?.as_str()? != "vendor" {
        return None;
    }
    input.get("schema")?.as_str().map(str::to_owned)
}

/// The agent fields the free-text rule reads: all but those an `equals_param` or
/// `in_param` check pins to the request's own parameters (the upstream can only echo
/// the caller's text there, or leave the member out).
fn free_text_candidates(contract: &Contract) -> Vec<Pointer> {
    let pinned: Vec<&Pointer> = contract
        .checks()
        .iter()
        .filter(|c| matches!(c, CheckSpec::EqualsParam { .. } | CheckSpec::InParam { .. }))
        .map(CheckSpec::field)
        .collect();
    contract
        .agent_fields()
        .iter()
        .filter(|f| !pinned.contains(f))
        .cloned()
        .collect()
}

/// Lint one schema file; `fields` are the agent fields it serves (none for a standalone
/// schema); `tool` names the contract whose own files `$ref` may reach.
pub fn lint_schema_file(path: &Path, fields: &[Pointer], tool: Option<&str>) -> Vec<LintFinding> {
    let unreadable = |message: String| {
        vec![LintFinding {
            rule: "schema-unreadable",
            severity: Level::Error,
            file: path.to_path_buf(),
            pointer: String::new(),
            line: 0,
            column: 0,
            message,
            allowed: None,
        }]
    };
    // As the loader reads it: a FIFO, a link or a huge file is refused, not read.
    let source = match airlock_guard::read_contract_file(path) {
        Ok(source) => source,
        Err(e) => return unreadable(e.to_string()),
    };
    let document = match parse(&source, 256) {
        Ok(document) => document,
        Err(e) => return unreadable(format!("not strict JSON: {e}")),
    };
    lint_schema(path, &source, &document, fields, tool)
}

/// Lint a parsed schema whose text is `source`.
pub fn lint_schema(
    path: &Path,
    source: &[u8],
    document: &Value,
    fields: &[Pointer],
    tool: Option<&str>,
) -> Vec<LintFinding> {
    let mut linter = Linter::new(document, tool);
    linter.walk(document, String::new(), false);
    linter.root(document);
    let file_name = path.file_name().and_then(|n| n.to_str());
    if let Some(cycle) = in_place_ref_cycle(document, file_name) {
        let at = cycle[0].trim_start_matches('#').to_owned();
        linter.flag(
            "ref-cycle",
            &at,
            format!(
                "reference cycle {} applies to the same value without ever stepping into a \
                 member or an item, so it admits any value (the guard refuses to load it): \
                 make the recursion go through `properties`, `items` or another keyword \
                 that applies to a child value",
                cycle.join(" → ")
            ),
        );
    }
    linter.agent_fields(fields);
    let positions = positions(source);
    let mut findings: Vec<LintFinding> = linter
        .raw
        .into_iter()
        .map(|(rule, pointer, message)| {
            let (line, column) = positions.get(&pointer).copied().unwrap_or((0, 0));
            LintFinding {
                rule,
                severity: severity(rule),
                file: path.to_path_buf(),
                pointer,
                line,
                column,
                message,
                allowed: None,
            }
        })
        .collect();
    findings.sort_by(|a, b| (a.line, a.column, a.rule).cmp(&(b.line, b.column, b.rule)));
    findings.dedup();
    findings
}

/// The findings as SARIF 2.1.0 for code scanning: one rule per lint rule (with its text
/// as help), each finding located at its file, line and column, a finding allowed in
/// `contract.toml` suppressed with its reason, and `partialFingerprints` of rule, file and
/// pointer (stable across edits that move lines).
pub fn sarif(findings: &[LintFinding]) -> String {
    let level = |severity: Level| match severity {
        Level::Error => "error",
        Level::Warning => "warning",
    };
    // Every rule a finding names is defined, those outside RULES (a contract that does
    // not load) after them: ruleIndex must point at the ruleId.
    let mut all: Vec<(&str, Level, &str)> = RULES.to_vec();
    for f in findings {
        if !all.iter().any(|(id, _, _)| *id == f.rule) {
            all.push((
                f.rule,
                f.severity,
                "the contract could not be read (its message says why)",
            ));
        }
    }
    let rules: Vec<Value> = all
        .iter()
        .map(|(id, severity, what)| {
            serde_json::json!({
                "id": id,
                "name": id,
                "shortDescription": {"text": what},
                "fullDescription": {"text": what},
                "help": {"text": format!("{what}. Fix the schema, or allow the finding in contract.toml's [lint] allow with a reason (docs/lint.md).")},
                "defaultConfiguration": {"level": level(*severity)},
            })
        })
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let uri = crate::base::report::relative(&f.file);
            let fingerprint = airlock_guard::sha256_hex(
                format!("{}\u{1}{uri}\u{1}{}", f.rule, f.pointer).as_bytes(),
            );
            let mut physical = serde_json::json!({"artifactLocation": {"uri": uri}});
            if f.line > 0 {
                physical["region"] =
                    serde_json::json!({"startLine": f.line, "startColumn": f.column.max(1)});
            }
            let at = if f.pointer.is_empty() {
                "(root)"
            } else {
                &f.pointer
            };
            let mut result = serde_json::json!({
                "ruleId": f.rule,
                "ruleIndex": all.iter().position(|(id, _, _)| *id == f.rule).unwrap_or(0),
                "level": level(f.severity),
                "message": {"text": format!("{at}: {}", f.message)},
                "locations": [{"physicalLocation": physical}],
                "partialFingerprints": {"airlockLint/v1": fingerprint},
            });
            if let Some(reason) = &f.allowed {
                result["suppressions"] = serde_json::json!([
                    {"kind": "inSource", "status": "accepted", "justification": reason}
                ]);
            }
            result
        })
        .collect();
    crate::base::report::sarif_log("airlock lint", rules, results)
}
