//! `airlock certify --tools-list OLD.json NEW.json`: two saved MCP `tools/list` answers
//! (a JSON-RPC response line or the bare result), read with the guard's strict parser and
//! a size bound; every tool in both certified — its `outputSchema` as a response, its
//! `inputSchema` as a request (narrowing breaks callers) — plus the tools added and removed.

use airlock_guard::{CompiledSchema, Resources};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::fmt;
use std::path::{Path, PathBuf};

use super::{compare, Certificate, Class, Direction, View};
use crate::base::report::{code_span, Align, Table};

/// A saved tools list larger than this is refused.
pub const MAX_TOOLS_LIST_BYTES: u64 = 16 * 1024 * 1024;
/// Nesting allowed in a tools list.
const MAX_DEPTH: usize = 256;
/// The dialect of a tool schema without `$schema` (MCP's).
const MCP_DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// A tool added or removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolChange {
    /// The tool.
    pub tool: String,
    /// Breaking for a removed tool (callers lose it), agent-visible for an added one.
    pub class: Class,
}

/// The certificates of two tools lists.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolsCertificate {
    /// The strongest class over every tool and the tools added or removed.
    pub verdict: Class,
    /// Tools only the new list has.
    pub added: Vec<ToolChange>,
    /// Tools only the old list has.
    pub removed: Vec<ToolChange>,
    /// One certificate per tool in both lists and per schema (`<tool>` output,
    /// `<tool> (input)` arguments).
    pub tools: Vec<Certificate>,
}

/// A tools list that cannot be used: which file, and why.
#[derive(Debug)]
pub struct ToolsListError {
    /// The file.
    pub path: PathBuf,
    /// Why, and what to do.
    pub reason: String,
}

impl fmt::Display for ToolsListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for ToolsListError {}

/// Certify every tool of two saved `tools/list` answers.
///
/// # Errors
///
/// A file that cannot be read, is larger than `MAX_TOOLS_LIST_BYTES` (16 MiB), is not strict
/// JSON, is not a `tools/list` answer, or holds a schema that does not compile.
pub fn certify_tools_lists(old: &Path, new: &Path) -> Result<ToolsCertificate, ToolsListError> {
    let (o, n) = (read(old)?, read(new)?);
    let mut tools = Vec::new();
    let mut verdict = Class::Compatible;
    for (name, new_tool) in &n {
        let Some(old_tool) = o.get(name) else {
            continue;
        };
        for (key, direction, label) in [
            ("outputSchema", Direction::Response, name.clone()),
            ("inputSchema", Direction::Request, format!("{name} (input)")),
        ] {
            let schema = |tool: &Value, path: &Path| {
                compile(tool.get(key), path, &format!("tool {name:?} {key}"))
            };
            let (os, ns) = (schema(old_tool, old)?, schema(new_tool, new)?);
            let view = View {
                agent: vec![String::new()],
                envelope: false,
                direction,
            };
            let certificate = compare(&label, &os, &ns, &view, Vec::new());
            verdict = verdict.min(certificate.verdict);
            tools.push(certificate);
        }
    }
    let only = |a: &Map<String, Value>, b: &Map<String, Value>, class: Class| -> Vec<ToolChange> {
        a.keys()
            .filter(|k| !b.contains_key(*k))
            .map(|k| ToolChange {
                tool: k.clone(),
                class,
            })
            .collect()
    };
    let added = only(&n, &o, Class::AgentVisible);
    let removed = only(&o, &n, Class::Breaking);
    for c in added.iter().chain(&removed) {
        verdict = verdict.min(c.class);
    }
    Ok(ToolsCertificate {
        verdict,
        added,
        removed,
        tools,
    })
}

fn error(path: &Path, reason: impl Into<String>) -> ToolsListError {
    ToolsListError {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// The tools of a saved answer, by name.
fn read(path: &Path) -> Result<Map<String, Value>, ToolsListError> {
    let file = std::fs::File::open(path).map_err(|e| error(path, format!("cannot read: {e}")))?;
    let bytes = airlock_guard::read_limited(file, MAX_TOOLS_LIST_BYTES).map_err(|e| match e {
        airlock_guard::ReadError::TooLarge { .. } => error(
            path,
            format!("larger than {MAX_TOOLS_LIST_BYTES} bytes: not a saved tools/list answer"),
        ),
        airlock_guard::ReadError::Io(e) => error(path, format!("cannot read: {e}")),
    })?;
    // One line as a server writes it; a trailing line break is allowed.
    let text = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    let value = airlock_guard::parse(text, MAX_DEPTH)
        .map_err(|e| error(path, format!("not strict JSON: {}", e.masked_message())))?;
    let result = match value.get("jsonrpc") {
        Some(_) => value.get("result").ok_or_else(|| {
            error(
                path,
                "a JSON-RPC message without `result`: save the answer to a successful tools/list call",
            )
        })?,
        None => &value,
    };
    let Some(Value::Array(list)) = result.get("tools") else {
        return Err(error(
            path,
            "no `tools` array: expected a tools/list answer ({\"jsonrpc\",\"id\",\"result\":{\"tools\":[…]}} or the bare result)",
        ));
    };
    if result.get("nextCursor").is_some_and(|c| !c.is_null()) {
        return Err(error(
            path,
            "the answer has a `nextCursor`: it is one page of the list; save every page's tools in one answer",
        ));
    }
    let mut tools = Map::new();
    for (i, tool) in list.iter().enumerate() {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            return Err(error(path, format!("tools[{i}] has no string `name`")));
        };
        if tools.insert(name.to_owned(), tool.clone()).is_some() {
            return Err(error(path, format!("tool {name:?} is listed twice")));
        }
    }
    Ok(tools)
}

/// A tool's schema compiled by the guard (a missing `outputSchema` admits anything;
/// MCP's dialect, 2020-12, when it names none).
fn compile(
    schema: Option<&Value>,
    path: &Path,
    what: &str,
) -> Result<CompiledSchema, ToolsListError> {
    let mut document = schema.cloned().unwrap_or(json!({}));
    if let Value::Object(map) = &mut document {
        map.entry("$schema").or_insert_with(|| json!(MCP_DIALECT));
    }
    let source = document.to_string();
    CompiledSchema::compile(
        document,
        source.as_bytes(),
        "airlock://tools-list/schema.json",
        &Resources::new(),
    )
    .map_err(|e| error(path, format!("{what}: {e}")))
}

impl ToolsCertificate {
    /// As pretty JSON.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// As Markdown: the summary, then each tool's certificate.
    pub fn markdown(&self) -> String {
        let mut table = Table::new(&[("tool", Align::Left, 0), ("change", Align::Left, 0)]);
        for c in &self.added {
            table.row(vec![
                code_span(&c.tool),
                format!("added ({})", c.class.as_str()),
            ]);
        }
        for c in &self.removed {
            table.row(vec![
                code_span(&c.tool),
                format!("removed ({})", c.class.as_str()),
            ]);
        }
        for c in &self.tools {
            table.row(vec![code_span(&c.tool), c.verdict.as_str().to_owned()]);
        }
        let mut out = format!(
            "# Tools list certificate\n\n**Verdict: {}**\n\n{}",
            self.verdict.as_str(),
            table.markdown()
        );
        for c in &self.tools {
            out.push('\n');
            out.push_str(
                &c.markdown()
                    .replacen("# Certificate", "## Certificate", 1)
                    .replace("\n## ", "\n### "),
            );
        }
        out
    }
}
